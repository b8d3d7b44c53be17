/*
 * thread_relaxed -- what a run with no constraint left (ENFORCE under an empty prefix) pays on
 * creating and joining threads, against the plain build: ROUNDS times, main creates THREADS
 * threads that each add to a shared counter atomically, and joins them. Prints `bad=0` (the
 * counter is exact) and `work_us=<microseconds>` from the first pthread_create to the last
 * pthread_join.
 */
#include <pthread.h>
#include <stdio.h>
#include <time.h>

#ifndef THREADS
#define THREADS 2
#endif
#ifndef ROUNDS
#define ROUNDS 200
#endif

static long counter;

static void *worker(void *p) {
  __atomic_fetch_add(&counter, (long)p, __ATOMIC_RELAXED);
  return 0;
}

int main(void) {
  struct timespec t0, t1;
  clock_gettime(CLOCK_MONOTONIC, &t0);
  for (int r = 0; r < ROUNDS; r++) {
    pthread_t t[THREADS];
    for (long i = 0; i < THREADS; i++) pthread_create(&t[i], 0, worker, (void *)1);
    for (int i = 0; i < THREADS; i++) pthread_join(t[i], 0);
  }
  clock_gettime(CLOCK_MONOTONIC, &t1);
  printf("bad=%d\n", counter != (long)ROUNDS * THREADS);
  printf("work_us=%ld\n", (t1.tv_sec - t0.tv_sec) * 1000000 + (t1.tv_nsec - t0.tv_nsec) / 1000);
  return 0;
}
