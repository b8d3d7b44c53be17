// lock_two_vars: two mutexes protect x and y; T1 writes x then y, T2 y then x, never holding
// both mutexes at once (no deadlock). Safe.
// Traces (hand count): an order of the two x sections and of the two y sections, but "T2's x
// section first and T1's y section first" is cyclic = 4 - 1 = 3.
// expect-traces: 3
// expect-bugs: none
#include <assert.h>
#include <pthread.h>

int x, y;
pthread_mutex_t mx = PTHREAD_MUTEX_INITIALIZER;
pthread_mutex_t my = PTHREAD_MUTEX_INITIALIZER;

void *t1(void *arg) {
  pthread_mutex_lock(&mx);
  x = 1;
  pthread_mutex_unlock(&mx);
  pthread_mutex_lock(&my);
  y = 1;
  pthread_mutex_unlock(&my);
  return arg;
}

void *t2(void *arg) {
  pthread_mutex_lock(&my);
  y = 2;
  pthread_mutex_unlock(&my);
  pthread_mutex_lock(&mx);
  x = 2;
  pthread_mutex_unlock(&mx);
  return arg;
}

int main(void) {
  pthread_t p, q;
  pthread_create(&p, 0, t1, 0);
  pthread_create(&q, 0, t2, 0);
  pthread_join(p, 0);
  pthread_join(q, 0);
  assert(x != 0 && y != 0);
  return 0;
}
