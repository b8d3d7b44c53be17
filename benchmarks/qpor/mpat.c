/*
 * mpat -- a "mutex pattern" program: K pairs of threads, 2K threads in all (MPAT(K)). Our own
 * program with the shape of the QPOR paper's MPAT family (Table 1: MPAT(4) has 9 threads and
 * 384 maximal configurations, MPAT(5) 11 threads and 4K, MPAT(6) 13 threads and 46K), which is
 * K! * 2^K traces for 2K threads plus main.
 *
 * Build with -DK=<pairs> (default 5, at most 31).
 *
 *   mutexes: g (global), m[0..K-1] (one per pair)
 *   thread A_i:  lock m[i]; lock g; order[pos++] = i; unlock g; y[i] += 1; unlock m[i]
 *   thread B_i:  lock m[i]; y[i] *= 2; unlock m[i]
 *
 * A_i's critical section on g is nested inside its critical section on m[i]. Every shared
 * variable is accessed only under its mutex (pos and order[] under g, y[i] under m[i]), so a
 * trace is fixed by the order of critical sections on each mutex:
 *   - g: the K sections of A_0..A_{K-1}, in any of K! orders;
 *   - m[i]: A_i's and B_i's sections, in either of 2 orders;
 * and every combination is feasible (lock order m[i] before g everywhere: no deadlock; B_i can
 * take m[i] before A_i starts or after A_i has left it, whatever happens on g). Hence
 * K! * 2^K traces: K=3: 48, K=4: 384, K=5: 3,840 (10 threads), K=6: 46,080, K=7: 645,120.
 * All of them come from races between lock acquisitions of at most two threads' sections that
 * are not entangled with any other race, so k = 1 already explores optimally (0 SSB).
 *
 * main creates A_0, B_0, A_1, B_1, ..., joins them and checks invariants that hold in every
 * schedule: pos == K, order[] is a permutation of 0..K-1, and y[i] (initially 1) is
 * (1+1)*2 = 4 when A_i took m[i] first and 1*2+1 = 3 when B_i did.
 */
#include <assert.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>

#ifndef K
#define K 5
#endif
#if K < 1 || K > 31
#error "K must be between 1 and 31"
#endif

static pthread_mutex_t g = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t m[K];
static int pos;       /* under g */
static int order[K];  /* under g */
static int y[K];      /* y[i] under m[i] */

static void *thread_a(void *arg) {
  int i = (int)(intptr_t)arg;
  pthread_mutex_lock(&m[i]);
  pthread_mutex_lock(&g);
  assert(pos < K);
  order[pos] = i;
  pos = pos + 1;
  pthread_mutex_unlock(&g);
  y[i] = y[i] + 1;
  pthread_mutex_unlock(&m[i]);
  return 0;
}

static void *thread_b(void *arg) {
  int i = (int)(intptr_t)arg;
  pthread_mutex_lock(&m[i]);
  y[i] = y[i] * 2;
  pthread_mutex_unlock(&m[i]);
  return 0;
}

int main(void) {
  pthread_t a[K], b[K];
  for (int i = 0; i < K; i++) {
    pthread_mutex_init(&m[i], 0);
    y[i] = 1;
  }
  for (int i = 0; i < K; i++) {
    pthread_create(&a[i], 0, thread_a, (void *)(intptr_t)i);
    pthread_create(&b[i], 0, thread_b, (void *)(intptr_t)i);
  }
  for (int i = 0; i < K; i++) {
    pthread_join(a[i], 0);
    pthread_join(b[i], 0);
  }
  int seen = 0, first_a = 0;
  for (int i = 0; i < K; i++) {
    seen |= 1 << order[i];
    assert(y[i] == 3 || y[i] == 4);
    first_a += y[i] == 4;
  }
  assert(pos == K && seen == (1 << K) - 1);
  printf("order[0]=%d pairs_a_first=%d\n", order[0], first_a);
  return 0;
}
