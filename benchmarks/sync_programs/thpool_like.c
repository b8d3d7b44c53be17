/*
 * thpool_like -- a thread pool shaped like the widely used C ones (C-Thread-Pool's thpool.c,
 * written anew): a job queue under its own mutex with a *binary semaphore* built from a mutex,
 * a condition variable and a value (`bsem`: post sets it and signals, post_all sets it and
 * broadcasts, wait waits for it and clears it), a `keepalive` flag the workers loop on, a count
 * of live and of working threads under `thcount_lock`, and `threads_all_idle`, which
 * thpool_wait waits on until the queue is empty and no worker works. Workers: wait on the
 * queue's semaphore; while keepalive, count themselves working, pull a job (a pull that leaves
 * jobs posts the semaphore again), run it, count themselves idle (the last one signals
 * `threads_all_idle`). main: init WORKERS workers (waiting until all are alive), add JOBS jobs,
 * thpool_wait, destroy.
 *
 * One departure from C-Thread-Pool: its destroy polls for the workers' exit with a one-second
 * time budget (`time()` in a loop, posting the semaphore each round) and then with sleep(1);
 * a loop that writes every round has no bound a checker can explore (a schedule that never
 * runs the workers repeats it forever), so here destroy clears keepalive, posts to all and
 * joins the workers, as pools built on joins do, and a worker that leaves posts to all again
 * (bsem_wait clears the value: without that the second worker waits forever, which the first
 * version of this program did).
 *
 * Build with -DWORKERS=<W> (default 2), -DJOBS=<N> (default 2). Checked after destroy: every
 * job ran exactly once. -DBUG: a worker counts itself idle before the job runs, so thpool_wait
 * can return while a job is still running (its result is then not there).
 */
#include <assert.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#ifndef WORKERS
#define WORKERS 2
#endif
#ifndef JOBS
#define JOBS 2
#endif

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
    job *front, *rear;
    bsem has_jobs;
    int len;
} jobqueue;

typedef struct thpool {
    pthread_t threads[WORKERS];
    volatile int num_threads_alive;
    volatile int num_threads_working;
    pthread_mutex_t thcount_lock;
    pthread_cond_t threads_all_idle;
    jobqueue queue;
} thpool;

static volatile int keepalive;
static int ran[JOBS];
static int done_at_wait[JOBS];

static void bsem_init(bsem *b, int v) {
    pthread_mutex_init(&b->mutex, NULL);
    pthread_cond_init(&b->cond, NULL);
    b->v = v;
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

static void queue_push(jobqueue *q, job *j) {
    pthread_mutex_lock(&q->rwmutex);
    j->prev = NULL;
    if (q->len == 0) {
        q->front = q->rear = j;
    } else {
        q->rear->prev = j;
        q->rear = j;
    }
    q->len++;
    bsem_post(&q->has_jobs);
    pthread_mutex_unlock(&q->rwmutex);
}

static job *queue_pull(jobqueue *q) {
    pthread_mutex_lock(&q->rwmutex);
    job *j = q->front;
    if (q->len == 1) {
        q->front = q->rear = NULL;
        q->len = 0;
    } else if (q->len > 1) {
        q->front = j->prev;
        q->len--;
        bsem_post(&q->has_jobs);
    }
    pthread_mutex_unlock(&q->rwmutex);
    return j;
}

static void *worker(void *arg) {
    thpool *p = arg;
    pthread_mutex_lock(&p->thcount_lock);
    p->num_threads_alive++;
    pthread_mutex_unlock(&p->thcount_lock);
    while (keepalive) {
        bsem_wait(&p->queue.has_jobs);
        if (!keepalive)
            break;
        pthread_mutex_lock(&p->thcount_lock);
        p->num_threads_working++;
        pthread_mutex_unlock(&p->thcount_lock);
        job *j = queue_pull(&p->queue);
#ifdef BUG
        pthread_mutex_lock(&p->thcount_lock);
        p->num_threads_working--;
        if (!p->num_threads_working)
            pthread_cond_signal(&p->threads_all_idle);
        pthread_mutex_unlock(&p->thcount_lock);
#endif
        if (j) {
            j->function(j->arg);
            free(j);
        }
#ifndef BUG
        pthread_mutex_lock(&p->thcount_lock);
        p->num_threads_working--;
        if (!p->num_threads_working)
            pthread_cond_signal(&p->threads_all_idle);
        pthread_mutex_unlock(&p->thcount_lock);
#endif
    }
    /* Pass the wake-up on: bsem_wait cleared it, and another worker may still wait. */
    bsem_post_all(&p->queue.has_jobs);
    pthread_mutex_lock(&p->thcount_lock);
    p->num_threads_alive--;
    pthread_mutex_unlock(&p->thcount_lock);
    return NULL;
}

static void task(void *arg) {
    ran[(long)arg]++;
}

static thpool *thpool_init(void) {
    thpool *p = malloc(sizeof *p);
    p->num_threads_alive = p->num_threads_working = 0;
    pthread_mutex_init(&p->thcount_lock, NULL);
    pthread_cond_init(&p->threads_all_idle, NULL);
    pthread_mutex_init(&p->queue.rwmutex, NULL);
    p->queue.front = p->queue.rear = NULL;
    p->queue.len = 0;
    bsem_init(&p->queue.has_jobs, 0);
    keepalive = 1;
    for (int i = 0; i < WORKERS; i++)
        pthread_create(&p->threads[i], NULL, worker, p);
    /* Wait for the workers to start (a read-only spin on the count, as C-Thread-Pool's). */
    while (p->num_threads_alive != WORKERS) {
    }
    return p;
}

static void thpool_add_work(thpool *p, void (*f)(void *), void *arg) {
    job *j = malloc(sizeof *j);
    j->function = f;
    j->arg = arg;
    queue_push(&p->queue, j);
}

static void thpool_wait(thpool *p) {
    pthread_mutex_lock(&p->thcount_lock);
    while (p->queue.len || p->num_threads_working)
        pthread_cond_wait(&p->threads_all_idle, &p->thcount_lock);
    pthread_mutex_unlock(&p->thcount_lock);
}

static void thpool_destroy(thpool *p) {
    keepalive = 0;
    bsem_post_all(&p->queue.has_jobs);
    for (int i = 0; i < WORKERS; i++)
        pthread_join(p->threads[i], NULL);
    free(p);
}

int main(void) {
    thpool *p = thpool_init();
    for (long i = 0; i < JOBS; i++)
        thpool_add_work(p, task, (void *)i);
    thpool_wait(p);
    for (int i = 0; i < JOBS; i++)
        done_at_wait[i] = ran[i];
    thpool_destroy(p);
    for (int i = 0; i < JOBS; i++) {
        assert(ran[i] == 1);
        assert(done_at_wait[i] == 1);
    }
    printf("jobs=%d\n", JOBS);
    return 0;
}
