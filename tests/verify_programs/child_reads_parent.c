// child_reads_parent: main keeps writing after it created a thread; the child reads what main
// wrote and leaves a result that main reads after the join. The result depends on the
// schedule; main's assertion allows every value SC can give. Safe.
// Traces (hand count): the child's load of x before or after main's second store (its load
// of x comes after main's first store, which precedes the creation) = 2.
// expect-traces: 2
// expect-bugs: none
#include <assert.h>
#include <pthread.h>

int x, result;

void *child(void *arg) {
  result = x * 10;
  return arg;
}

int main(void) {
  pthread_t t;
  x = 1;
  pthread_create(&t, 0, child, 0);
  x = 2;
  pthread_join(t, 0);
  assert(result == 10 || result == 20);
  return 0;
}
