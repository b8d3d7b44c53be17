/*
 * indexer -- concurrent insertion into a hash table with compare-and-swap
 * (after the "indexer" example of Flanagan and Godefroid, "Dynamic Partial-Order
 * Reduction for Model Checking Software", POPL 2005).
 *
 * NTHREADS = 15 threads each compute MSGS = 4 values w = m * 11 + tid (m = 1..4) and
 * insert each into the shared table int table[128]: the slot is h = (w * 7) mod 128,
 * claimed with __sync_bool_compare_and_swap(&table[h], 0, w); if the slot is taken the
 * thread probes linearly (h + 1, h + 2, ...).  Threads 11..14 produce the same values
 * as threads 0..3 one message later, so only they collide; with 12 or more threads
 * the accesses conflict and the number of interleavings grows quickly.  60 < 128 values
 * are inserted, so probing always ends.  Where each value lands depends on the
 * schedule, but the set of stored values does not: main prints the number of occupied
 * slots and the sum of the stored values, both deterministic.
 */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <time.h>

#ifndef NTHREADS
#define NTHREADS 15
#endif
#define MSGS 4
#define SIZE 128

int table[SIZE];

static double now_us(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}

static void *indexer(void *arg) {
  int tid = (int)(intptr_t)arg;
  for (int m = 1; m <= MSGS; m++) {
    int w = m * 11 + tid;
    int h = (w * 7) % SIZE;
    while (!__sync_bool_compare_and_swap(&table[h], 0, w))
      h = (h + 1) % SIZE;
  }
  return 0;
}

int main(void) {
  pthread_t t[NTHREADS];
  double start = now_us();
  for (int i = 0; i < NTHREADS; i++)
    pthread_create(&t[i], 0, indexer, (void *)(intptr_t)i);
  for (int i = 0; i < NTHREADS; i++)
    pthread_join(t[i], 0);
  double end = now_us();

  int used = 0;
  long sum = 0;
  for (int h = 0; h < SIZE; h++) {
    int w = table[h];
    if (w != 0) {
      used++;
      sum += w;
    }
  }
  printf("inserted=%d sum=%ld\n", used, sum);
  printf("work_us=%.1f\n", end - start);
  return 0;
}
