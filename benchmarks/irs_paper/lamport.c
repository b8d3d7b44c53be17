/*
 * lamport -- Lamport's fast mutual-exclusion algorithm for two threads
 * (L. Lamport, "A Fast Mutual Exclusion Algorithm", ACM TOCS 1987; SV-COMP "lamport" style).
 *
 * Threads have ids 1 and 2.  To enter, thread i sets b[i] and x = i; if y is taken it
 * backs off and waits for y == 0; otherwise it sets y = i and, if x was overwritten
 * meanwhile (contention), clears b[i], waits until no thread has its b set and enters
 * only if y is still its own id, else waits for y == 0 and starts over.  The exit sets
 * y = 0 and clears b[i].  Each thread enters ROUNDS times and increments a shared
 * counter inside the critical section.  All shared variables are volatile so that the
 * plain -O2 build keeps every access (and the busy-wait loops); full fences
 * (__sync_synchronize, not an irs event) after the entry stores and around the critical
 * section make the algorithm correct on real hardware.  The algorithm is deadlock-free;
 * with a bounded number of rounds every busy-wait ends.  The final counter is always
 * 2 * ROUNDS.
 */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <time.h>

#ifndef ROUNDS
#define ROUNDS 4
#endif
#define NTHREADS 2

volatile int b[NTHREADS + 1];   /* b[i]: thread i is trying (index 0 unused) */
volatile int x, y;              /* Lamport's x and y; 0 means "nobody" for y */
volatile int counter;

static double now_us(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}

static void lock_fast(int me) {
  for (;;) {
    b[me] = 1;
    x = me;
    __sync_synchronize();
    if (y != 0) {
      b[me] = 0;
      while (y != 0)
        ;
      continue;
    }
    y = me;
    __sync_synchronize();
    if (x != me) {
      b[me] = 0;
      __sync_synchronize();
      for (int j = 1; j <= NTHREADS; j++)
        while (b[j])
          ;
      if (y != me) {
        while (y != 0)
          ;
        continue;
      }
    }
    return;
  }
}

static void unlock_fast(int me) {
  __sync_synchronize();
  y = 0;
  b[me] = 0;
}

static void *worker(void *arg) {
  int me = (int)(intptr_t)arg;
  for (int r = 0; r < ROUNDS; r++) {
    lock_fast(me);
    __sync_synchronize();
    counter = counter + 1;            /* critical section */
    unlock_fast(me);
  }
  return 0;
}

int main(void) {
  pthread_t t[NTHREADS];
  double start = now_us();
  for (int i = 0; i < NTHREADS; i++)
    pthread_create(&t[i], 0, worker, (void *)(intptr_t)(i + 1));
  for (int i = 0; i < NTHREADS; i++)
    pthread_join(t[i], 0);
  double end = now_us();
  printf("counter=%d\n", counter);
  printf("work_us=%.1f\n", end - start);
  return 0;
}
