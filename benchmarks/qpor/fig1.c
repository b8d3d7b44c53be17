/*
 * fig1 -- the program of Fig. 1 (a) of Nguyen, Rodriguez, Sousa, Coti, Petrucci,
 * "Quasi-Optimal Partial Order Reduction" (CAV 2018), written from the paper's description.
 *
 *   writer w_j (j = 0..N-1):  x_j = 7 + j
 *   count:                    c = c + 1, N-1 times (c starts at 0)
 *   master:                   i = c; x_i = 0
 *
 * Build with -DN=<writers> (default 3, at most 60 so that N + 2 threads fit irs's 64).
 *
 * Default (mutex) version: as the paper says, "Fig. 1 (a) can be trivially modified" to its
 * program model, where threads interfere only through mutexes: every access to c is inside a
 * critical section of mc, every access to x_j inside one of mx[j]. A Mazurkiewicz trace is then
 * fixed by the order of critical sections on each mutex:
 *   - master's single section on mc falls before the first, between two, or after the last of
 *     count's N-1 sections: N choices, which decide i = 0 .. N-1;
 *   - master's section on mx[i] comes before or after writer i's: 2 choices;
 *   - every other mutex is used by one thread only.
 * So the program has exactly 2N traces (maximal configurations), the same whether memory
 * accesses are events or not, and whether reads of one location are dependent or not (all the
 * accesses to a location are ordered by its mutex anyway). An optimal exploration runs 2N
 * executions with no sleep-set-blocked (SSB) one; SDPOR (QPOR with k = 1) tries to reverse
 * master's x_i = 0 against every writer and has O(2^N) SSB executions; k = 2 is optimal.
 *
 * -DRACY=1: the figure's program as printed, with plain unsynchronised accesses (data races
 * on c and x_i). c = c + 1 is a load and a store of c; master's i = c a load. Trace counts:
 *   - all accesses to a location dependent (reads too): master's load of c goes in one of
 *     2(N-1)+1 places among count's N-1 load/store pairs, each a different trace, then 2
 *     orders against writer i's store: 2(2N-1) = 4N-2 traces;
 *   - reads of a location by different threads independent: only the place among count's N-1
 *     stores matters: N places, 2N traces (the paper's count).
 *
 * main creates the N writers, count and master, joins them, and prints the outcome. No
 * assertion: the program has no bug; the value of i and of x[] depends on the schedule.
 */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>

#ifndef N
#define N 3
#endif
#ifndef RACY
#define RACY 0
#endif
#if N < 1 || N > 60
#error "N must be between 1 and 60"
#endif

static int x[N];  /* x[j] is written by writer j and maybe by master */
static int c;     /* the counter */
static int seen;  /* the value master read, published for main after the joins */
static pthread_mutex_t mx[N];
static pthread_mutex_t mc __attribute__((unused)) = PTHREAD_MUTEX_INITIALIZER;

#if RACY
#define LOCK(m) ((void)0)
#define UNLOCK(m) ((void)0)
#else
#define LOCK(m) pthread_mutex_lock(m)
#define UNLOCK(m) pthread_mutex_unlock(m)
#endif

static void *writer(void *arg) {
  int j = (int)(intptr_t)arg;
  LOCK(&mx[j]);
  x[j] = 7 + j;
  UNLOCK(&mx[j]);
  return 0;
}

static void *count(void *arg) {
  (void)arg;
  for (int k = 0; k < N - 1; k++) {
    LOCK(&mc);
    c = c + 1;
    UNLOCK(&mc);
  }
  return 0;
}

static void *master(void *arg) {
  (void)arg;
  LOCK(&mc);
  int i = c;
  UNLOCK(&mc);
  LOCK(&mx[i]);
  x[i] = 0;
  UNLOCK(&mx[i]);
  seen = i;  /* only master writes it; main reads it after joining master */
  return 0;
}

int main(void) {
  pthread_t w[N], tc, tm;
  for (int j = 0; j < N; j++) pthread_mutex_init(&mx[j], 0);
  for (int j = 0; j < N; j++) pthread_create(&w[j], 0, writer, (void *)(intptr_t)j);
  pthread_create(&tc, 0, count, 0);
  pthread_create(&tm, 0, master, 0);
  for (int j = 0; j < N; j++) pthread_join(w[j], 0);
  pthread_join(tc, 0);
  pthread_join(tm, 0);
  printf("i=%d x[i]=%d\n", seen, x[seen]);
  return 0;
}
