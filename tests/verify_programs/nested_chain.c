// nested_chain: a thread creates a thread. main creates T1 only; T1 creates T2 and joins it.
// main and T2 both write x while T1 reads it between its create and its join. Only one thread
// ever creates at a time, so runtime ids do not depend on the schedule here (compare
// nested_create). main asserts a value SC allows. Safe.
// Traces (hand count): the three accesses of x (main's store, T1's load after creating T2,
// T2's store) in any order = 3! = 6.
// expect-traces: 6
// expect-bugs: none
#include <assert.h>
#include <pthread.h>

int x, seen;

void *grandchild(void *arg) {
  x = 2;
  return arg;
}

void *child(void *arg) {
  pthread_t t;
  pthread_create(&t, 0, grandchild, 0);
  int r = x;
  pthread_join(t, 0);
  assert(r >= 0 && r <= 2);
  return arg;
}

int main(void) {
  pthread_t t;
  pthread_create(&t, 0, child, 0);
  x = 1;
  pthread_join(t, 0);
  assert(x == 1 || x == 2);
  return 0;
}
