/*
 * cond_relaxed -- what irs's own condition variables cost a run with no constraint left
 * (ENFORCE under an empty prefix), against the plain build on glibc's: PAIRS producer threads
 * put ITEMS items each into a ring of 4 under a mutex, waiting on `not_full`; PAIRS consumers
 * take them, waiting on `not_empty`. Prints `sum_ok=1` (every item taken once) and
 * `work_us=<microseconds>` from the first pthread_create to the last pthread_join.
 */
#include <pthread.h>
#include <stdio.h>
#include <time.h>

#ifndef PAIRS
#define PAIRS 2
#endif
#ifndef ITEMS
#define ITEMS 5000
#endif
#define RING 4

static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t not_full = PTHREAD_COND_INITIALIZER, not_empty = PTHREAD_COND_INITIALIZER;
static long ring[RING];
static int head, count;
static long taken_sum;

static void *producer(void *p) {
  for (long i = 1; i <= ITEMS; i++) {
    pthread_mutex_lock(&m);
    while (count == RING) pthread_cond_wait(&not_full, &m);
    ring[(head + count) % RING] = i;
    count++;
    pthread_cond_signal(&not_empty);
    pthread_mutex_unlock(&m);
  }
  return p;
}

static void *consumer(void *p) {
  long sum = 0;
  for (int i = 0; i < ITEMS; i++) {
    pthread_mutex_lock(&m);
    while (count == 0) pthread_cond_wait(&not_empty, &m);
    sum += ring[head];
    head = (head + 1) % RING;
    count--;
    pthread_cond_signal(&not_full);
    pthread_mutex_unlock(&m);
  }
  pthread_mutex_lock(&m);
  taken_sum += sum;
  pthread_mutex_unlock(&m);
  return p;
}

int main(void) {
  struct timespec t0, t1;
  clock_gettime(CLOCK_MONOTONIC, &t0);
  pthread_t t[2 * PAIRS];
  for (int i = 0; i < PAIRS; i++) {
    pthread_create(&t[2 * i], 0, producer, 0);
    pthread_create(&t[2 * i + 1], 0, consumer, 0);
  }
  for (int i = 0; i < 2 * PAIRS; i++) pthread_join(t[i], 0);
  clock_gettime(CLOCK_MONOTONIC, &t1);
  long expect = (long)PAIRS * ITEMS * (ITEMS + 1) / 2;
  printf("sum_ok=%d\nwork_us=%.0f\n", taken_sum == expect, (t1.tv_sec - t0.tv_sec) * 1e6 + (t1.tv_nsec - t0.tv_nsec) / 1e3);
  return taken_sum != expect;
}
