/*
 * memheavy.c - a memory-heavy, data-race-free pthreads workload used to
 * measure the OFF-mode overhead of `irs cc` instrumentation.
 *
 * Shape of the work (per thread, on its own disjoint slice of one large
 * shared heap array):
 *   1. a sequential read-modify-write scan with a loop-carried dependency
 *      (not vectorisable), which also reads a global lookup table and
 *      bumps a per-thread global histogram at a data-dependent index;
 *   2. a pseudo-random gather/scatter over the slice (cache-missing loads
 *      and stores to the heap), again mixing in global table reads;
 *   3. every CHUNK elements, a mutex-protected update of shared totals.
 *
 * Threads only read the global table (written before they start), write
 * their own slice of the heap array and their own histogram row, and touch
 * the shared totals under a mutex, so the program is race free and its
 * output is deterministic.
 *
 * Usage: memheavy [NTHREADS]   (1..4, default 2)
 * Output: "checksum=0x..." then, as the last line, "work_us=<N>", the
 * wall-clock time of the threaded part (create .. join) in microseconds.
 */
#include <inttypes.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#define MAX_THREADS 4
#define N_ELEMS (1u << 22)      /* 4 Mi uint32 = 16 MiB, well past LLC */
#define PASSES 20
#define RANDOM_STEPS (1u << 20) /* random accesses per thread per pass */
#define CHUNK 4096u

/* Read-only during the threaded phase. */
static uint32_t table[256];
static uint32_t *data;
static unsigned nthreads = 2;

/* Written only by the owning thread (one row each, padded apart). */
static uint32_t hist[MAX_THREADS][256 + 16];
static struct {
    uint64_t local_sum;
    uint32_t passes_done;
    char pad[52];
} per_thread[MAX_THREADS];

/* Shared, mutex-protected. */
static pthread_mutex_t total_lock = PTHREAD_MUTEX_INITIALIZER;
static uint64_t shared_total;
static uint64_t shared_max;
static uint32_t shared_updates;
static uint32_t shared_hits[MAX_THREADS];

static void publish(uint64_t partial, unsigned tid)
{
    pthread_mutex_lock(&total_lock);
    shared_total += partial;
    if (partial > shared_max)
        shared_max = partial;
    shared_hits[tid]++;
    shared_updates++;
    pthread_mutex_unlock(&total_lock);
}

static void *worker(void *arg)
{
    unsigned tid = (unsigned)(uintptr_t)arg;
    uint32_t lo = (uint32_t)((uint64_t)N_ELEMS * tid / nthreads);
    uint32_t hi = (uint32_t)((uint64_t)N_ELEMS * (tid + 1) / nthreads);
    uint32_t len = hi - lo;
    uint32_t *row = hist[tid];
    uint32_t rng = 0x9e3779b9u ^ (tid * 0x85ebca6bu);

    for (unsigned pass = 0; pass < PASSES; pass++) {
        /* 1. sequential scan with a loop-carried dependency */
        uint32_t carry = pass * 0x27d4eb2fu + tid;
        uint64_t partial = 0;
        for (uint32_t i = lo; i < hi; i++) {
            uint32_t v = data[i];
            carry = carry * 31u + v;
            v = (v ^ table[carry >> 24]) + carry;
            data[i] = v;
            row[v & 255]++;
            partial += v;
            if (((i - lo) & (CHUNK - 1)) == CHUNK - 1) {
                publish(partial, tid);
                partial = 0;
            }
        }
        publish(partial, tid);

        /* 2. pseudo-random gather/scatter within the slice */
        uint64_t gsum = 0;
        for (uint32_t s = 0; s < RANDOM_STEPS; s++) {
            rng = rng * 1664525u + 1013904223u;
            uint32_t j = lo + (uint32_t)(((uint64_t)rng * len) >> 32);
            uint32_t x = data[j];
            uint32_t k = lo + ((j - lo + (x & 1023u)) % len);
            uint32_t y = data[k];
            data[j] = x * 2654435761u + table[y & 255];
            data[k] = y ^ (x >> 7);
            gsum += x ^ y;
            if ((s & (CHUNK - 1)) == CHUNK - 1) {
                per_thread[tid].local_sum += gsum;
                gsum = 0;
            }
        }
        per_thread[tid].local_sum += gsum;
        per_thread[tid].passes_done++;
    }
    return NULL;
}

static uint64_t mix64(uint64_t h, uint64_t v)
{
    h ^= v + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2);
    return h;
}

int main(int argc, char **argv)
{
    if (argc > 1) {
        long n = strtol(argv[1], NULL, 10);
        if (n < 1 || n > MAX_THREADS) {
            fprintf(stderr, "usage: %s [NTHREADS 1..%d]\n", argv[0], MAX_THREADS);
            return 2;
        }
        nthreads = (unsigned)n;
    }

    data = malloc((size_t)N_ELEMS * sizeof *data);
    if (!data) {
        perror("malloc");
        return 1;
    }
    uint32_t seed = 12345u;
    for (unsigned i = 0; i < 256; i++) {
        seed = seed * 1103515245u + 12345u;
        table[i] = seed ^ (seed >> 16);
    }
    for (uint32_t i = 0; i < N_ELEMS; i++) {
        seed ^= seed << 13;
        seed ^= seed >> 17;
        seed ^= seed << 5;
        data[i] = seed;
    }

    pthread_t th[MAX_THREADS];
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    for (unsigned t = 0; t < nthreads; t++) {
        if (pthread_create(&th[t], NULL, worker, (void *)(uintptr_t)t) != 0) {
            fprintf(stderr, "pthread_create failed\n");
            return 1;
        }
    }
    for (unsigned t = 0; t < nthreads; t++)
        pthread_join(th[t], NULL);
    clock_gettime(CLOCK_MONOTONIC, &t1);

    uint64_t h = 0x243f6a8885a308d3ull;
    for (uint32_t i = 0; i < N_ELEMS; i++)
        h = mix64(h, data[i]);
    for (unsigned t = 0; t < nthreads; t++) {
        for (unsigned b = 0; b < 256; b++)
            h = mix64(h, hist[t][b]);
        h = mix64(h, per_thread[t].local_sum);
        h = mix64(h, per_thread[t].passes_done);
    }
    h = mix64(h, shared_total);
    h = mix64(h, shared_max);
    h = mix64(h, shared_updates);
    for (unsigned t = 0; t < nthreads; t++)
        h = mix64(h, shared_hits[t]);

    printf("checksum=0x%016" PRIx64 "\n", h);
    long long us = (long long)(t1.tv_sec - t0.tv_sec) * 1000000LL +
                   (t1.tv_nsec - t0.tv_nsec) / 1000;
    printf("work_us=%lld\n", us);
    free(data);
    return 0;
}
