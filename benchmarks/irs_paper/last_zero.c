/*
 * last_zero -- one reader looks for the last zero of an array that N writers fill in
 * (after the "lastzero" benchmark of Abdulla, Aronis, Jonsson and Sagonas,
 * "Optimal Dynamic Partial Order Reduction", POPL 2014).
 *
 * int array[N + 1] starts all zero.  Thread 0 scans from the end for the last zero:
 * for (i = N; array[i] != 0; i--);  threads 1..N each do array[j] = array[j - 1] + 1.
 * array[0] is never written, so the scan always stops.  With N = 15 there are 16
 * threads.  The index found and the final array contents depend on the schedule, so
 * nothing but the work time is printed; the index is kept in the global `last_zero`.
 */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <time.h>

#ifndef N
#define N 15
#endif

int array[N + 1];
int last_zero;

static double now_us(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}

static void *scanner(void *arg) {
  (void)arg;
  int i;
  for (i = N; array[i] != 0; i--)
    ;
  last_zero = i;
  return 0;
}

static void *writer(void *arg) {
  int j = (int)(intptr_t)arg;
  array[j] = array[j - 1] + 1;
  return 0;
}

int main(void) {
  pthread_t t[N + 1];
  double start = now_us();
  pthread_create(&t[0], 0, scanner, 0);
  for (int j = 1; j <= N; j++)
    pthread_create(&t[j], 0, writer, (void *)(intptr_t)j);
  for (int j = 0; j <= N; j++)
    pthread_join(t[j], 0);
  double end = now_us();
  printf("work_us=%.1f\n", end - start);
  return 0;
}
