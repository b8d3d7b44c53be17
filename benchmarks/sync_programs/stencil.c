/*
 * stencil -- a barrier-phased 1-D three-point stencil (Jacobi style, double-buffered):
 * THREADS threads each own an equal block of an array of N cells; in each of PHASES phases a
 * thread computes its block of the next array from the current one,
 *     next[i] = cur[i-1] + 2*cur[i] + cur[i+1]   (cells outside the array count as 0),
 * then waits at a pthread_barrier before the next phase reads what its neighbours wrote.
 *
 * Build with -DTHREADS=<T> (default 2), -DN=<cells> (default 4, a multiple of T),
 * -DPHASES=<P> (default 2).
 *
 * Checked after the joins: the final array equals the one main computes sequentially.
 *
 * -DBUG: the barrier is initialised with THREADS-1 (an off-by-one in the count: the barrier
 * opens for every single thread), so a thread can start the next phase while its neighbour has
 * not yet written the cells it reads, or still reads the cells it overwrites.
 */
#include <assert.h>
#include <pthread.h>
#include <stdio.h>

#ifndef THREADS
#define THREADS 2
#endif
#ifndef N
#define N 4
#endif
#ifndef PHASES
#define PHASES 2
#endif
#if THREADS < 1 || N < THREADS || N % THREADS != 0 || PHASES < 1
#error "need THREADS >= 1, N a multiple of THREADS, PHASES >= 1"
#endif

#ifdef BUG
#define BARRIER_COUNT (THREADS - 1 > 0 ? THREADS - 1 : 1)
#else
#define BARRIER_COUNT THREADS
#endif

static pthread_barrier_t barrier;
static int buf[2][N];

static int cell(const int *a, int i) {
    return i < 0 || i >= N ? 0 : a[i];
}

static void step(const int *cur, int *next, int lo, int hi) {
    for (int i = lo; i < hi; i++)
        next[i] = cell(cur, i - 1) + 2 * cell(cur, i) + cell(cur, i + 1);
}

static void *worker(void *arg) {
    int t = (int)(long)arg;
    int lo = t * (N / THREADS), hi = lo + N / THREADS;
    for (int p = 0; p < PHASES; p++) {
        step(buf[p % 2], buf[(p + 1) % 2], lo, hi);
        pthread_barrier_wait(&barrier);
    }
    return NULL;
}

int main(void) {
    pthread_t th[THREADS];
    int ref[2][N];
    for (int i = 0; i < N; i++)
        buf[0][i] = ref[0][i] = i + 1;
    pthread_barrier_init(&barrier, NULL, BARRIER_COUNT);
    for (long t = 0; t < THREADS; t++)
        pthread_create(&th[t], NULL, worker, (void *)t);
    for (int t = 0; t < THREADS; t++)
        pthread_join(th[t], NULL);
    for (int p = 0; p < PHASES; p++)
        step(ref[p % 2], ref[(p + 1) % 2], 0, N);
    long sum = 0;
    for (int i = 0; i < N; i++) {
        assert(buf[PHASES % 2][i] == ref[PHASES % 2][i] && "stencil result differs from the sequential one");
        sum += buf[PHASES % 2][i];
    }
    pthread_barrier_destroy(&barrier);
    printf("stencil: %d threads, %d cells, %d phases, checksum %ld: ok\n", THREADS, N, PHASES, sum);
    return 0;
}
