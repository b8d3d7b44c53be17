// two_bugs: a lock-order inversion (deadlock) and an order violation (assert) in one program.
// T1 takes a then b and writes x = 1; T2 takes b then a and writes x = 2; main expects T2's
// write to come last.
// Traces (hand count): deadlock, T1 then T2 (safe), T2 then T1 (assert) = 3.
// expect-traces: 3
// expect-bugs: assert, deadlock
#include <assert.h>
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
  assert(x == 2);
  return 0;
}
