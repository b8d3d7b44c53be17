/*
 * thread_pool -- a fixed pool of WORKERS threads serving a FIFO work queue (one mutex, one
 * condition variable `work`). main submits TASKS tasks (lock, enqueue, signal, unlock), then
 * shuts the pool down: it sets `shutdown` under the mutex, broadcasts, and joins the workers.
 * A worker sleeps while the queue is empty and the pool is running, drains the queue before it
 * honours the shutdown, and runs each task it dequeued outside the lock (task t computes
 * result[t] = t*t + 1 and counts its runs).
 *
 * Build with -DWORKERS=<W> (default 2), -DTASKS=<N> (default 3).
 *
 * Checked after the joins: every task ran exactly once and left its result; the queue is empty.
 *
 * -DBUG: a worker that wakes up checks `shutdown` before the queue and leaves at once, so tasks
 * still queued when the shutdown is broadcast are never run (a common shutdown bug; it shows
 * when main's submissions and the shutdown overtake the workers).
 */
#include <assert.h>
#include <pthread.h>
#include <stdio.h>

#ifndef WORKERS
#define WORKERS 2
#endif
#ifndef TASKS
#define TASKS 3
#endif
#if WORKERS < 1 || TASKS < 1
#error "need WORKERS, TASKS >= 1"
#endif

static pthread_mutex_t m;
static pthread_cond_t work;
static int queue[TASKS];
static int qhead, qtail; /* tasks queue[qhead..qtail) are waiting */
static int shutdown_requested;
static int runs[TASKS], result[TASKS];

static void run_task(int t) {
    result[t] = t * t + 1;
    runs[t]++;
}

static void *worker(void *arg) {
    (void)arg;
    for (;;) {
        pthread_mutex_lock(&m);
        while (qhead == qtail && !shutdown_requested)
            pthread_cond_wait(&work, &m);
#ifdef BUG
        if (shutdown_requested) {
#else
        if (qhead == qtail) { /* empty, so shutdown_requested */
#endif
            pthread_mutex_unlock(&m);
            return NULL;
        }
        int t = queue[qhead++];
        pthread_mutex_unlock(&m);
        run_task(t);
    }
}

static void submit(int t) {
    pthread_mutex_lock(&m);
    queue[qtail++] = t;
    pthread_cond_signal(&work);
    pthread_mutex_unlock(&m);
}

int main(void) {
    pthread_t w[WORKERS];
    pthread_mutex_init(&m, NULL);
    pthread_cond_init(&work, NULL);
    for (long i = 0; i < WORKERS; i++)
        pthread_create(&w[i], NULL, worker, (void *)i);
    for (int t = 0; t < TASKS; t++)
        submit(t);
    pthread_mutex_lock(&m);
    shutdown_requested = 1;
    pthread_cond_broadcast(&work);
    pthread_mutex_unlock(&m);
    for (int i = 0; i < WORKERS; i++)
        pthread_join(w[i], NULL);
    int done = 0;
    for (int t = 0; t < TASKS; t++) {
        assert(runs[t] == 1 && "a task did not run exactly once");
        assert(result[t] == t * t + 1);
        done += runs[t];
    }
    assert(qhead == qtail);
    printf("thread_pool: %d workers ran %d of %d tasks once each: ok\n", WORKERS, done, TASKS);
    return 0;
}
