// deadlock_abba: lock-order inversion. T1 takes a then b, T2 takes b then a.
// Traces (hand count): T1's critical section first, T2's first, or the deadlock (T1 holds a,
// T2 holds b) = 3.
// expect-traces: 3
// expect-bugs: deadlock
#include <pthread.h>

int x;
pthread_mutex_t a = PTHREAD_MUTEX_INITIALIZER;
pthread_mutex_t b = PTHREAD_MUTEX_INITIALIZER;

void *t1(void *arg) {
  pthread_mutex_lock(&a);
  pthread_mutex_lock(&b);
  x = 1;
  pthread_mutex_unlock(&b);
  pthread_mutex_unlock(&a);
  return arg;
}

void *t2(void *arg) {
  pthread_mutex_lock(&b);
  pthread_mutex_lock(&a);
  x = 2;
  pthread_mutex_unlock(&a);
  pthread_mutex_unlock(&b);
  return arg;
}

int main(void) {
  pthread_t p, q;
  pthread_create(&p, 0, t1, 0);
  pthread_create(&q, 0, t2, 0);
  pthread_join(p, 0);
  pthread_join(q, 0);
  return 0;
}
