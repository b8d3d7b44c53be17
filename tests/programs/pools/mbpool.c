/* A thread pool written the way mbrossard's threadpool is: a fixed ring of tasks guarded by
 * one mutex, a `notify` condition variable, graceful shutdown with joins, and a
 * `threadpool_free` that locks the pool's mutex and destroys it while it is locked (undefined
 * in POSIX, harmless in glibc), then frees. After the pool is gone, a second pool is made in
 * the same memory (a mutex destroyed while locked, then initialised again, is a fresh one).
 *
 * Usage: mbpool [THREADS [TASKS [ROUNDS]]]. Exits 0 when every task ran. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

typedef enum { immediate_shutdown = 1, graceful_shutdown = 2 } threadpool_shutdown_t;

typedef struct {
    void (*function)(void *);
    void *argument;
} threadpool_task_t;

typedef struct threadpool_t {
    pthread_mutex_t lock;
    pthread_cond_t notify;
    pthread_t *threads;
    threadpool_task_t *queue;
    int thread_count;
    int queue_size;
    int head;
    int tail;
    int count;
    int shutdown;
    int started;
} threadpool_t;

static void *threadpool_thread(void *threadpool);

static int threadpool_free(threadpool_t *pool) {
    if (pool == NULL || pool->started > 0)
        return -1;
    if (pool->threads) {
        free(pool->threads);
        free(pool->queue);
        /* Locked and destroyed while locked, as the library does. */
        pthread_mutex_lock(&pool->lock);
        pthread_mutex_destroy(&pool->lock);
        pthread_cond_destroy(&pool->notify);
    }
    return 0;
}

static int threadpool_init(threadpool_t *pool, int thread_count, int queue_size) {
    pool->thread_count = 0;
    pool->queue_size = queue_size;
    pool->head = pool->tail = pool->count = 0;
    pool->shutdown = pool->started = 0;
    pool->threads = malloc(sizeof(pthread_t) * thread_count);
    pool->queue = malloc(sizeof(threadpool_task_t) * queue_size);
    if (pthread_mutex_init(&pool->lock, NULL) != 0 || pthread_cond_init(&pool->notify, NULL) != 0 || !pool->threads || !pool->queue)
        return -1;
    for (int i = 0; i < thread_count; i++) {
        if (pthread_create(&pool->threads[i], NULL, threadpool_thread, pool) != 0)
            return -1;
        pool->thread_count++;
        pool->started++;
    }
    return 0;
}

static int threadpool_add(threadpool_t *pool, void (*function)(void *), void *argument) {
    int err = 0;
    if (pthread_mutex_lock(&pool->lock) != 0)
        return -1;
    int next = (pool->tail + 1) % pool->queue_size;
    do {
        if (pool->count == pool->queue_size) {
            err = -2;
            break;
        }
        if (pool->shutdown) {
            err = -3;
            break;
        }
        pool->queue[pool->tail].function = function;
        pool->queue[pool->tail].argument = argument;
        pool->tail = next;
        pool->count += 1;
        if (pthread_cond_signal(&pool->notify) != 0)
            err = -4;
    } while (0);
    if (pthread_mutex_unlock(&pool->lock) != 0)
        err = -4;
    return err;
}

static int threadpool_destroy(threadpool_t *pool, int graceful) {
    int err = 0;
    if (pthread_mutex_lock(&pool->lock) != 0)
        return -1;
    pool->shutdown = graceful ? graceful_shutdown : immediate_shutdown;
    if (pthread_cond_broadcast(&pool->notify) != 0 || pthread_mutex_unlock(&pool->lock) != 0)
        return -4;
    for (int i = 0; i < pool->thread_count; i++)
        if (pthread_join(pool->threads[i], NULL) != 0)
            err = -5;
    if (!err)
        threadpool_free(pool);
    return err;
}

static void *threadpool_thread(void *threadpool) {
    threadpool_t *pool = threadpool;
    threadpool_task_t task;
    for (;;) {
        pthread_mutex_lock(&pool->lock);
        while (pool->count == 0 && !pool->shutdown)
            pthread_cond_wait(&pool->notify, &pool->lock);
        if (pool->shutdown == immediate_shutdown || (pool->shutdown == graceful_shutdown && pool->count == 0))
            break;
        task.function = pool->queue[pool->head].function;
        task.argument = pool->queue[pool->head].argument;
        pool->head = (pool->head + 1) % pool->queue_size;
        pool->count -= 1;
        pthread_mutex_unlock(&pool->lock);
        task.function(task.argument);
    }
    pool->started--;
    pthread_mutex_unlock(&pool->lock);
    return NULL;
}

static pthread_mutex_t done_lock = PTHREAD_MUTEX_INITIALIZER;
static int done;

static void dummy_task(void *arg) {
    (void)arg;
    pthread_mutex_lock(&done_lock);
    done++;
    pthread_mutex_unlock(&done_lock);
}

static threadpool_t pool;

int main(int argc, char **argv) {
    int threads = argc > 1 ? atoi(argv[1]) : 3;
    int tasks = argc > 2 ? atoi(argv[2]) : 6;
    int rounds = argc > 3 ? atoi(argv[3]) : 2;
    int added = 0;
    for (int r = 0; r < rounds; r++) {
        if (threadpool_init(&pool, threads, tasks + 1) != 0)
            return 2;
        for (int i = 0; i < tasks; i++)
            if (threadpool_add(&pool, dummy_task, NULL) == 0)
                added++;
        if (threadpool_destroy(&pool, 1) != 0)
            return 3;
    }
    printf("done %d of %d\n", done, added);
    return done == added ? 0 : 1;
}
