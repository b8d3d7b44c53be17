/*
 * barrier_relaxed -- what irs's own barriers cost a run with no constraint left (ENFORCE under
 * an empty prefix), against the plain build on glibc's: THREADS threads run ROUNDS phases, each
 * adding to its own slot of a shared array between two waits at one barrier, then checking the
 * slots' sum once every thread has added. Prints `bad=0` and `work_us=<microseconds>` from the
 * first pthread_create to the last pthread_join.
 */
#include <pthread.h>
#include <stdio.h>
#include <time.h>

#ifndef THREADS
#define THREADS 3
#endif
#ifndef ROUNDS
#define ROUNDS 5000
#endif

static pthread_barrier_t bar;
static volatile long slot[THREADS];

static void *worker(void *p) {
  long me = (long)p, bad = 0;
  for (long r = 1; r <= ROUNDS; r++) {
    slot[me] = r;
    pthread_barrier_wait(&bar);
    long sum = 0;
    for (int i = 0; i < THREADS; i++) sum += slot[i];
    bad += sum != r * THREADS;
    pthread_barrier_wait(&bar);
  }
  return (void *)bad;
}

int main(void) {
  struct timespec t0, t1;
  pthread_barrier_init(&bar, 0, THREADS);
  clock_gettime(CLOCK_MONOTONIC, &t0);
  pthread_t t[THREADS];
  for (long i = 0; i < THREADS; i++) pthread_create(&t[i], 0, worker, (void *)i);
  long bad = 0;
  for (int i = 0; i < THREADS; i++) {
    void *r;
    pthread_join(t[i], &r);
    bad += (long)r;
  }
  clock_gettime(CLOCK_MONOTONIC, &t1);
  printf("bad=%ld\nwork_us=%.0f\n", bad, (t1.tv_sec - t0.tv_sec) * 1e6 + (t1.tv_nsec - t0.tv_nsec) / 1e3);
  return bad != 0;
}
