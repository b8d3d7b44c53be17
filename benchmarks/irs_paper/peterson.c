/*
 * peterson -- Peterson's mutual-exclusion algorithm for two threads (SV-COMP "peterson" style).
 *
 * Two worker threads each enter a critical section ROUNDS times: raise the own flag,
 * give the turn to the other thread, and wait while the other thread wants to enter
 * and has the turn.  Inside, a shared counter is incremented.  The flags, turn and
 * the counter are volatile so that the plain -O2 build keeps every access (and the
 * busy-wait loop).  Full fences (__sync_synchronize, not an irs event) between the
 * entry stores and the waiting loads, and around the critical section, make the
 * algorithm correct on real hardware.  Peterson's algorithm is deadlock- and
 * starvation-free, so every busy-wait ends.  The final counter is always 2 * ROUNDS.
 */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <time.h>

#ifndef ROUNDS
#define ROUNDS 4
#endif

volatile int flag[2];
volatile int turn;
volatile int counter;

static double now_us(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}

static void *worker(void *arg) {
  int me = (int)(intptr_t)arg;
  int other = 1 - me;
  for (int r = 0; r < ROUNDS; r++) {
    flag[me] = 1;
    turn = other;
    __sync_synchronize();
    while (flag[other] && turn == other)
      ;
    __sync_synchronize();
    counter = counter + 1;            /* critical section */
    __sync_synchronize();
    flag[me] = 0;
  }
  return 0;
}

int main(void) {
  pthread_t t[2];
  double start = now_us();
  for (int i = 0; i < 2; i++)
    pthread_create(&t[i], 0, worker, (void *)(intptr_t)i);
  for (int i = 0; i < 2; i++)
    pthread_join(t[i], 0);
  double end = now_us();
  printf("counter=%d\n", counter);
  printf("work_us=%.1f\n", end - start);
  return 0;
}
