// sv_atomic: two threads increment a counter in __VERIFIER_atomic_* functions (one step each,
// no other thread in between); main checks the sum after the joins. Safe.
// Traces (hand count): the two blocks in either order: 2.
// expect-traces: 2
// expect-bugs: none
#include <assert.h>
#include <pthread.h>

int counter;

void __VERIFIER_atomic_inc(void) {
  int c = counter;
  counter = c + 1;
}

void *inc(void *arg) {
  __VERIFIER_atomic_inc();
  return arg;
}

int main(void) {
  pthread_t a, b;
  pthread_create(&a, 0, inc, 0);
  pthread_create(&b, 0, inc, 0);
  pthread_join(a, 0);
  pthread_join(b, 0);
  assert(counter == 2);
  return 0;
}
