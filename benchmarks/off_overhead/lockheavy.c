/*
 * lockheavy.c - a lock-heavy pthreads workload for the OFF-mode overhead benchmark: the
 * opposite end from memheavy.c. Every iteration takes and releases a shared mutex, so the
 * cost of the routed pthread_mutex_lock/unlock wrappers (one extra call and a mode test each)
 * is as visible as it can be.
 *
 * Usage: lockheavy [NTHREADS]   (1..4, default 2)
 * Output: "checksum=..." then, as the last line, "work_us=<N>" (create .. join).
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#define ITERS 2000000

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static unsigned long counter;
static unsigned long mix;

static void *worker(void *arg) {
    unsigned long seed = (unsigned long)(size_t)arg * 2654435761u + 1;
    for (int i = 0; i < ITERS; i++) {
        seed = seed * 6364136223846793005ul + 1442695040888963407ul;
        pthread_mutex_lock(&lock);
        counter++;
        mix += seed >> 33;
        pthread_mutex_unlock(&lock);
    }
    return NULL;
}

int main(int argc, char **argv) {
    int n = argc > 1 ? atoi(argv[1]) : 2;
    if (n < 1 || n > 4) {
        fprintf(stderr, "usage: lockheavy [1..4]\n");
        return 2;
    }
    pthread_t t[4];
    struct timespec a, b;
    clock_gettime(CLOCK_MONOTONIC, &a);
    for (int i = 0; i < n; i++) pthread_create(&t[i], NULL, worker, (void *)(size_t)(i + 1));
    for (int i = 0; i < n; i++) pthread_join(t[i], NULL);
    clock_gettime(CLOCK_MONOTONIC, &b);
    /* The sum over seeds does not depend on the interleaving. */
    printf("checksum=%lu:%lu\n", counter, mix);
    printf("work_us=%ld\n", (long)((b.tv_sec - a.tv_sec) * 1000000 + (b.tv_nsec - a.tv_nsec) / 1000));
    return 0;
}
