/*
 * dekker -- Dekker's mutual-exclusion algorithm for two threads (SV-COMP "dekker" style).
 *
 * Two worker threads each enter a critical section ROUNDS times using Dekker's
 * flag/turn protocol and increment a shared counter inside it.  The flags, turn and
 * the counter are volatile so that the plain -O2 build keeps every access (and the
 * busy-wait loops).  Full fences (__sync_synchronize, not a memory access, so not an
 * irs event) after raising a flag and around the critical section make the algorithm
 * correct on real hardware, where a store may otherwise be overtaken by a later load.
 * Dekker's algorithm is deadlock- and starvation-free, so every busy-wait ends.
 * With mutual exclusion the final counter is always 2 * ROUNDS.
 */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <time.h>

#ifndef ROUNDS
#define ROUNDS 4
#endif

volatile int flag[2];     /* flag[i]: thread i wants to enter */
volatile int turn;        /* whose turn it is when both want to enter */
volatile int counter;     /* protected by the algorithm */

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
    __sync_synchronize();
    while (flag[other]) {
      if (turn != me) {
        flag[me] = 0;
        while (turn != me)
          ;
        flag[me] = 1;
        __sync_synchronize();
      }
    }
    __sync_synchronize();
    counter = counter + 1;            /* critical section */
    __sync_synchronize();
    turn = other;
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
