// Two threads meet at a barrier: exactly one gets PTHREAD_BARRIER_SERIAL_THREAD, and each sees
// the other's write from before the barrier. Safe.
// expect-bugs: none
#include <assert.h>
#include <pthread.h>
pthread_barrier_t b;
int x, y, serial;
void *other(void *a) {
  y = 1;
  if (pthread_barrier_wait(&b) == PTHREAD_BARRIER_SERIAL_THREAD) __atomic_fetch_add(&serial, 1, __ATOMIC_SEQ_CST);
  assert(x == 1);
  return a;
}
int main(void) {
  pthread_barrier_init(&b, 0, 2);
  pthread_t t;
  pthread_create(&t, 0, other, 0);
  x = 1;
  if (pthread_barrier_wait(&b) == PTHREAD_BARRIER_SERIAL_THREAD) __atomic_fetch_add(&serial, 1, __ATOMIC_SEQ_CST);
  assert(y == 1);
  pthread_join(t, 0);
  assert(serial == 1);
  return 0;
}
