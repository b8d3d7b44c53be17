/*
 * mutex_relaxed -- what a run with no constraint left (ENFORCE under an empty prefix) pays on
 * mutexes and the plain accesses they guard, against the plain build: THREADS threads increment
 * a shared counter ITERS times each under one mutex, and a word of their own without it.
 * Prints `bad=0` (the counter is exact) and `work_us=<microseconds>` from the first
 * pthread_create to the last pthread_join.
 */
#include <pthread.h>
#include <stdio.h>
#include <time.h>

#ifndef THREADS
#define THREADS 3
#endif
#ifndef ITERS
#define ITERS 20000
#endif

static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
static long counter;
static long own[THREADS][8];

static void *worker(void *p) {
  long me = (long)p;
  for (int i = 0; i < ITERS; i++) {
    pthread_mutex_lock(&m);
    counter++;
    pthread_mutex_unlock(&m);
    own[me][0] += i;
  }
  return 0;
}

int main(void) {
  struct timespec t0, t1;
  clock_gettime(CLOCK_MONOTONIC, &t0);
  pthread_t t[THREADS];
  for (long i = 0; i < THREADS; i++) pthread_create(&t[i], 0, worker, (void *)i);
  for (int i = 0; i < THREADS; i++) pthread_join(t[i], 0);
  clock_gettime(CLOCK_MONOTONIC, &t1);
  long bad = counter != (long)THREADS * ITERS;
  printf("bad=%ld\nwork_us=%.0f\n", bad, (t1.tv_sec - t0.tv_sec) * 1e6 + (t1.tv_nsec - t0.tv_nsec) / 1e3);
  return bad != 0;
}
