// partial_lock: T1 increments x inside a mutex, T2 forgets the mutex. The lock does not
// protect T1 from T2, so an update can be lost: main's assertion fails under some schedules.
// Traces (hand count): T2's load and store of x interleaved with T1's load and store:
// 4!/(2!2!) = 6 (T2 touches no mutex).
// expect-traces: 6
// expect-bugs: assert
#include <assert.h>
#include <pthread.h>

int x;
pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;

void *careful(void *arg) {
  pthread_mutex_lock(&m);
  x = x + 1;
  pthread_mutex_unlock(&m);
  return arg;
}

void *careless(void *arg) {
  x = x + 1;
  return arg;
}

int main(void) {
  pthread_t a, b;
  pthread_create(&a, 0, careful, 0);
  pthread_create(&b, 0, careless, 0);
  pthread_join(a, 0);
  pthread_join(b, 0);
  assert(x == 2);
  return 0;
}
