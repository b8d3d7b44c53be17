/* Snapshot policy benchmark: main computes for a while (no visible events: WORK iterations of
 * an LCG, about 1 ns each) before NT threads each take one mutex ITERS times. Every run from
 * main re-runs the computation; a run from a snapshot after it does not.
 * Mazurkiewicz traces: (NT*ITERS)! / (ITERS!)^NT (the lock sections' interleavings).
 * Build: irs cc -O1 -DWORK=<n> -DNT=<threads> -DITERS=<k> prefix.c */
#include <pthread.h>
#ifndef WORK
#define WORK 1000000
#endif
#ifndef NT
#define NT 4
#endif
#ifndef ITERS
#define ITERS 2
#endif
static int counter;
static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
static volatile unsigned long sink;
static void *worker(void *arg) {
  for (int k = 0; k < ITERS; k++) {
    pthread_mutex_lock(&m);
    counter++;
    pthread_mutex_unlock(&m);
  }
  return arg;
}
int main(void) {
  unsigned long x = 1;
  for (long i = 0; i < WORK; i++) x = x * 6364136223846793005ul + 1442695040888963407ul;
  sink = x;
  pthread_t t[NT];
  for (int i = 0; i < NT; i++) pthread_create(&t[i], 0, worker, 0);
  for (int i = 0; i < NT; i++) pthread_join(t[i], 0);
  return counter == NT * ITERS ? 0 : 1;
}
