/*
 * fibonacci -- two threads racing on two shared integers (SV-COMP "fib_bench" style).
 *
 * i and j start at 1.  Thread 1 does i = i + j, thread 2 does j = j + i, each ROUNDS
 * times, without synchronisation, so the final values depend on the interleaving.
 * The largest value either variable can reach is fib(2 * ROUNDS + 2) (the strictly
 * alternating schedule); SV-COMP's "unsafe" variant asserts that this value is never
 * reached, which fails under exactly that schedule.  Here nothing is asserted: main
 * prints the check of the always-true bound (i and j never exceed fib(2 * ROUNDS + 2)),
 * which is deterministic, and keeps the schedule-dependent values to itself.
 * i and j are volatile so that the plain -O2 build performs every load and store
 * (otherwise each loop collapses to a single multiply-add).
 */
#include <pthread.h>
#include <stdio.h>
#include <time.h>

#ifndef ROUNDS
#define ROUNDS 10
#endif

volatile int i = 1, j = 1;

static double now_us(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}

static void *add_j_to_i(void *arg) {
  (void)arg;
  for (int k = 0; k < ROUNDS; k++)
    i = i + j;
  return 0;
}

static void *add_i_to_j(void *arg) {
  (void)arg;
  for (int k = 0; k < ROUNDS; k++)
    j = j + i;
  return 0;
}

int main(void) {
  pthread_t t1, t2;
  double start = now_us();
  pthread_create(&t1, 0, add_j_to_i, 0);
  pthread_create(&t2, 0, add_i_to_j, 0);
  pthread_join(t1, 0);
  pthread_join(t2, 0);
  double end = now_us();

  /* fib(2 * ROUNDS + 2), with fib(1) = fib(2) = 1 */
  int a = 1, c = 1;
  for (int k = 2; k < 2 * ROUNDS + 2; k++) {
    int next = a + c;
    a = c;
    c = next;
  }
  int fi = i, fj = j;
  printf("bound_ok=%d\n", fi <= c && fj <= c);
  printf("work_us=%.1f\n", end - start);
  return 0;
}
