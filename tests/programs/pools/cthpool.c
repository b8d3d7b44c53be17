/* A thread pool written the way Pithikos' C-Thread-Pool is: a job queue guarded by a mutex, a
 * binary semaphore made of a mutex and a condition variable, keep-alive and on-hold flags that
 * the threads read without synchronisation, a `thpool_wait` on a condition variable, a
 * `thpool_destroy` that polls (with `time` and `sleep`) until every thread has left, and pause /
 * resume through SIGUSR1, whose handler runs instrumented code (it writes the on-hold flag and
 * sleeps while it is set).
 *
 * Usage: cthpool [THREADS [JOBS [pause|count|paused]]]. Prints the sum of the jobs' results;
 * exits 0 when it is right. Like the library's own tests, two modes time their steps with sleeps:
 * `count` adds jobs that sleep, sleeps, and counts the threads working (api.c: every job must
 * have started); `paused` pauses the pool, adds the jobs, sleeps, resumes, sleeps, and destroys
 * the pool without waiting for the jobs (pause_resume.c: the threads, resumed, must take them
 * while `main` sleeps). */
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

typedef struct bsem {
    pthread_mutex_t mutex;
    pthread_cond_t cond;
    int v;
} bsem;

typedef struct job {
    struct job *prev;
    void (*function)(void *arg);
    void *arg;
} job;

typedef struct jobqueue {
    pthread_mutex_t rwmutex;
    job *front;
    job *rear;
    bsem *has_jobs;
    int len;
} jobqueue;

struct thpool_;
typedef struct thread {
    int id;
    pthread_t pthread;
    struct thpool_ *thpool_p;
} thread;

typedef struct thpool_ {
    thread **threads;
    volatile int num_threads_alive;
    volatile int num_threads_working;
    pthread_mutex_t thcount_lock;
    pthread_cond_t threads_all_idle;
    jobqueue jobqueue;
} thpool_;

static volatile int threads_keepalive;
static volatile int threads_on_hold;
static volatile int threads_held;

static void bsem_init(bsem *b, int value) {
    pthread_mutex_init(&b->mutex, NULL);
    pthread_cond_init(&b->cond, NULL);
    b->v = value;
}

static void bsem_reset(bsem *b) {
    pthread_mutex_destroy(&b->mutex);
    pthread_cond_destroy(&b->cond);
    bsem_init(b, 0);
}

static void bsem_post(bsem *b) {
    pthread_mutex_lock(&b->mutex);
    b->v = 1;
    pthread_cond_signal(&b->cond);
    pthread_mutex_unlock(&b->mutex);
}

static void bsem_post_all(bsem *b) {
    pthread_mutex_lock(&b->mutex);
    b->v = 1;
    pthread_cond_broadcast(&b->cond);
    pthread_mutex_unlock(&b->mutex);
}

static void bsem_wait(bsem *b) {
    pthread_mutex_lock(&b->mutex);
    while (b->v != 1)
        pthread_cond_wait(&b->cond, &b->mutex);
    b->v = 0;
    pthread_mutex_unlock(&b->mutex);
}

static int jobqueue_init(jobqueue *q) {
    q->len = 0;
    q->front = NULL;
    q->rear = NULL;
    q->has_jobs = malloc(sizeof(bsem));
    if (!q->has_jobs)
        return -1;
    pthread_mutex_init(&q->rwmutex, NULL);
    bsem_init(q->has_jobs, 0);
    return 0;
}

static void jobqueue_push(jobqueue *q, job *newjob) {
    pthread_mutex_lock(&q->rwmutex);
    newjob->prev = NULL;
    switch (q->len) {
    case 0:
        q->front = newjob;
        q->rear = newjob;
        break;
    default:
        q->rear->prev = newjob;
        q->rear = newjob;
    }
    q->len++;
    bsem_post(q->has_jobs);
    pthread_mutex_unlock(&q->rwmutex);
}

static job *jobqueue_pull(jobqueue *q) {
    pthread_mutex_lock(&q->rwmutex);
    job *j = q->front;
    switch (q->len) {
    case 0:
        break;
    case 1:
        q->front = NULL;
        q->rear = NULL;
        q->len = 0;
        break;
    default:
        q->front = j->prev;
        q->len--;
        bsem_post(q->has_jobs);
    }
    pthread_mutex_unlock(&q->rwmutex);
    return j;
}

static void jobqueue_clear(jobqueue *q) {
    while (q->len)
        free(jobqueue_pull(q));
    q->front = NULL;
    q->rear = NULL;
    bsem_reset(q->has_jobs);
    q->len = 0;
}

static void jobqueue_destroy(jobqueue *q) {
    jobqueue_clear(q);
    free(q->has_jobs);
}

/* The SIGUSR1 handler: instrumented code, run on whichever thread the signal interrupts. */
static void thread_hold(int sig) {
    (void)sig;
    __atomic_fetch_add(&threads_held, 1, __ATOMIC_SEQ_CST);
    while (threads_on_hold)
        usleep(1000);
}

static void *thread_do(void *arg) {
    thread *t = arg;
    thpool_ *p = t->thpool_p;
    struct sigaction act;
    sigemptyset(&act.sa_mask);
    act.sa_flags = 0;
    act.sa_handler = thread_hold;
    if (sigaction(SIGUSR1, &act, NULL) == -1)
        fprintf(stderr, "thread_do(): cannot handle SIGUSR1\n");

    pthread_mutex_lock(&p->thcount_lock);
    p->num_threads_alive += 1;
    pthread_mutex_unlock(&p->thcount_lock);

    while (threads_keepalive) {
        bsem_wait(p->jobqueue.has_jobs);
        if (threads_keepalive) {
            pthread_mutex_lock(&p->thcount_lock);
            p->num_threads_working++;
            pthread_mutex_unlock(&p->thcount_lock);

            job *j = jobqueue_pull(&p->jobqueue);
            if (j) {
                j->function(j->arg);
                free(j);
            }

            pthread_mutex_lock(&p->thcount_lock);
            p->num_threads_working--;
            if (!p->num_threads_working)
                pthread_cond_signal(&p->threads_all_idle);
            pthread_mutex_unlock(&p->thcount_lock);
        }
    }
    pthread_mutex_lock(&p->thcount_lock);
    p->num_threads_alive--;
    pthread_mutex_unlock(&p->thcount_lock);
    return NULL;
}

static thpool_ *thpool_init(int num_threads) {
    threads_on_hold = 0;
    threads_keepalive = 1;
    thpool_ *p = malloc(sizeof(thpool_));
    if (!p)
        return NULL;
    p->num_threads_alive = 0;
    p->num_threads_working = 0;
    if (jobqueue_init(&p->jobqueue) == -1) {
        free(p);
        return NULL;
    }
    p->threads = malloc(num_threads * sizeof(thread *));
    pthread_mutex_init(&p->thcount_lock, NULL);
    pthread_cond_init(&p->threads_all_idle, NULL);
    for (int n = 0; n < num_threads; n++) {
        p->threads[n] = malloc(sizeof(thread));
        p->threads[n]->thpool_p = p;
        p->threads[n]->id = n;
        pthread_create(&p->threads[n]->pthread, NULL, thread_do, p->threads[n]);
        pthread_detach(p->threads[n]->pthread);
    }
    /* Wait for the threads to start, as the library does: a spin on a volatile count. */
    while (p->num_threads_alive != num_threads) {
    }
    return p;
}

static int thpool_add_work(thpool_ *p, void (*f)(void *), void *arg) {
    job *j = malloc(sizeof(job));
    if (!j)
        return -1;
    j->function = f;
    j->arg = arg;
    jobqueue_push(&p->jobqueue, j);
    return 0;
}

static void thpool_wait(thpool_ *p) {
    pthread_mutex_lock(&p->thcount_lock);
    while (p->jobqueue.len || p->num_threads_working)
        pthread_cond_wait(&p->threads_all_idle, &p->thcount_lock);
    pthread_mutex_unlock(&p->thcount_lock);
}

/* The library sets the flag in the handler; set first here, and wait until every thread
 * holds, so that the plain build never misses a resume. */
static void thpool_pause(thpool_ *p, int n) {
    threads_on_hold = 1;
    for (int i = 0; i < n; i++)
        pthread_kill(p->threads[i]->pthread, SIGUSR1);
    while (__atomic_load_n(&threads_held, __ATOMIC_SEQ_CST) != n)
        usleep(100);
}

static void thpool_resume(thpool_ *p) {
    (void)p;
    threads_on_hold = 0;
    threads_held = 0;
}

static void thpool_destroy(thpool_ *p, int n) {
    if (!p)
        return;
    volatile int total = p->num_threads_alive;
    threads_keepalive = 0;
    /* Give one second to kill idle threads, then poll with sleep, as the library does. */
    double timeout = 1.0;
    time_t start, end;
    double passed = 0.0;
    time(&start);
    while (passed < timeout && p->num_threads_alive) {
        bsem_post_all(p->jobqueue.has_jobs);
        time(&end);
        passed = difftime(end, start);
    }
    while (p->num_threads_alive) {
        bsem_post_all(p->jobqueue.has_jobs);
        sleep(1);
    }
    jobqueue_destroy(&p->jobqueue);
    for (int i = 0; i < n; i++)
        free(p->threads[i]);
    free(p->threads);
    free(p);
    (void)total;
}

static pthread_mutex_t sum_lock = PTHREAD_MUTEX_INITIALIZER;
static long sum;

static void task(void *arg) {
    long v = (long)(size_t)arg;
    pthread_mutex_lock(&sum_lock);
    sum += v;
    pthread_mutex_unlock(&sum_lock);
}

static void sleepy_task(void *arg) {
    usleep(600000);
    task(arg);
}

static int threads_working(thpool_ *p) {
    pthread_mutex_lock(&p->thcount_lock);
    int n = p->num_threads_working;
    pthread_mutex_unlock(&p->thcount_lock);
    return n;
}

int main(int argc, char **argv) {
    int threads = argc > 1 ? atoi(argv[1]) : 4;
    int jobs = argc > 2 ? atoi(argv[2]) : 8;
    const char *mode = argc > 3 ? argv[3] : "";
    int pause = strcmp(mode, "pause") == 0;
    thpool_ *p = thpool_init(threads);
    if (!p)
        return 2;
    long want = (long)jobs * (jobs + 1) / 2;
    if (strcmp(mode, "count") == 0) {
        for (int i = 1; i <= jobs; i++)
            thpool_add_work(p, sleepy_task, (void *)(size_t)i);
        usleep(200000);
        int working = threads_working(p);
        /* As api.c, no destroy (it polls the clock): the process's end stops the threads. */
        thpool_wait(p);
        int expect = jobs < threads ? jobs : threads;
        printf("working %d sum %ld\n", working, sum);
        return working == expect && sum == want ? 0 : 1;
    }
    if (strcmp(mode, "paused") == 0) {
        thpool_pause(p, threads);
        for (int i = 1; i <= jobs; i++)
            thpool_add_work(p, task, (void *)(size_t)i);
        usleep(300000);
        thpool_resume(p);
        usleep(200000);
        thpool_destroy(p, threads);
        printf("sum %ld\n", sum);
        return sum == want ? 0 : 1;
    }
    /* Paused and resumed before the jobs are added: a thread may be interrupted while it holds
     * the queue's semaphore's mutex (in the plain build too, inside pthread_cond_wait before it
     * releases the mutex), so adding work while the threads are held could wait for ever. */
    if (pause) {
        thpool_pause(p, threads);
        thpool_resume(p);
    }
    for (int i = 1; i <= jobs; i++)
        thpool_add_work(p, task, (void *)(size_t)i);
    thpool_wait(p);
    thpool_destroy(p, threads);
    printf("sum %ld\n", sum);
    return sum == want ? 0 : 1;
}
