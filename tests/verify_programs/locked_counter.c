// locked_counter: the same increments as lost_update, each inside one mutex. Safe.
// Traces (hand count): the critical sections run in one of 2 orders.
// expect-traces: 2
// expect-bugs: none
#include <assert.h>
#include <pthread.h>

int x;
pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;

void *inc(void *arg) {
  pthread_mutex_lock(&m);
  x = x + 1;
  pthread_mutex_unlock(&m);
  return arg;
}

int main(void) {
  pthread_t a, b;
  pthread_create(&a, 0, inc, 0);
  pthread_create(&b, 0, inc, 0);
  pthread_join(a, 0);
  pthread_join(b, 0);
  assert(x == 2);
  return 0;
}
