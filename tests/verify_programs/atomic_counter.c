// atomic_counter: two threads increment a counter with an atomic fetch-and-add (one `rmw`
// event each), so no update is lost. Safe.
// Traces (hand count): the 2 orders of the two rmw events.
// expect-traces: 2
// expect-bugs: none
#include <assert.h>
#include <pthread.h>

int x;

void *inc(void *arg) {
  __atomic_fetch_add(&x, 1, __ATOMIC_SEQ_CST);
  return arg;
}

int main(void) {
  pthread_t a, b;
  pthread_create(&a, 0, inc, 0);
  pthread_create(&b, 0, inc, 0);
  pthread_join(a, 0);
  pthread_join(b, 0);
  assert(__atomic_load_n(&x, __ATOMIC_SEQ_CST) == 2);
  return 0;
}
