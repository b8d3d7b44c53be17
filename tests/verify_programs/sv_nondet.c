// sv_nondet: SV-COMP's interface. A thread stores a __VERIFIER_nondet_int value (explored over
// the default values {0, 1}); main reads it after the join and fails on 1, but only when its own
// nondet bool is set too: each value of each call is a choice of its thread.
// Traces (hand count): 2 values x 2 values, and nothing else is concurrent: 4.
// expect-traces: 4
// expect-bugs: assert
#include <pthread.h>
extern int __VERIFIER_nondet_int(void);
extern _Bool __VERIFIER_nondet_bool(void);
extern void __VERIFIER_assert(int);

int x;

void *store(void *arg) {
  x = __VERIFIER_nondet_int();
  return arg;
}

int main(void) {
  pthread_t t;
  pthread_create(&t, 0, store, 0);
  int b = __VERIFIER_nondet_bool();
  pthread_join(t, 0);
  __VERIFIER_assert(!(b && x == 1));
  return 0;
}
