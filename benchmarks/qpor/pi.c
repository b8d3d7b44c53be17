/*
 * pi -- parallel computation of pi (PI(N)), our own program with the shape of the QPOR
 * paper's PI family (Table 1: PI(5) has 6 threads and 120 maximal configurations, PI(6) 720,
 * PI(7) 5K, PI(8) 40K: N! for N worker threads plus main).
 *
 * Build with -DN=<threads> (default 5, at most 63); -DSTEPS=<intervals> (default 1200).
 *
 * pi = integral of 4/(1+x^2) over [0,1], by the midpoint rule on STEPS intervals. Worker t
 * takes the intervals t, t+N, t+2N, ... and sums them in a local variable (no shared access,
 * so no event), then adds its partial sum to the shared total once, under the mutex m:
 *
 *   worker t:  part = sum over its intervals (local);  lock m; pi += part; done++; unlock m
 *
 * The only interference is between these N critical sections, one per thread, on one mutex:
 * N! orders, each a different trace, all feasible. Hence N! traces (3: 6, 4: 24, 5: 120,
 * 6: 720, 7: 5,040, 8: 40,320). Races are never entangled, so k = 1 is already optimal (0 SSB),
 * as in the paper ("explored optimally both with k = 1 and by SDPOR").
 *
 * main creates the workers, joins them and checks that all of them contributed and that the
 * result is within 1e-6 of pi (true in every order: floating-point addition in another order
 * changes only the last bits).
 */
#include <assert.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>

#ifndef N
#define N 5
#endif
#ifndef STEPS
#define STEPS 1200
#endif
#if N < 1 || N > 63
#error "N must be between 1 and 63"
#endif

static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
static double pi;  /* under m */
static int done;   /* under m */

static void *worker(void *arg) {
  int t = (int)(intptr_t)arg;
  const double h = 1.0 / STEPS;
  double part = 0.0;
  for (int k = t; k < STEPS; k += N) {
    double x = (k + 0.5) * h;
    part += 4.0 / (1.0 + x * x);
  }
  part *= h;
  pthread_mutex_lock(&m);
  pi += part;
  done++;
  pthread_mutex_unlock(&m);
  return 0;
}

int main(void) {
  pthread_t t[N];
  for (int i = 0; i < N; i++) pthread_create(&t[i], 0, worker, (void *)(intptr_t)i);
  for (int i = 0; i < N; i++) pthread_join(t[i], 0);
  assert(done == N);
  double err = pi - 3.14159265358979323846;
  assert(err < 1e-6 && err > -1e-6);
  printf("pi=%.12f\n", pi);
  return 0;
}
