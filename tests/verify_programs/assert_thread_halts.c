// assert_thread_halts: T1's assertion fails when T2 wrote x first. The failing thread halts,
// the others go on: T2 still finishes (its store of z happens), and main, which joins T1 first,
// stays blocked. The outcome is the violation.
// Traces (hand count): T1's load of x before or after T2's store = 2.
// expect-traces: 2
// expect-bugs: assert
#include <assert.h>
#include <pthread.h>

int x, y, z;

void *checker(void *arg) {
  int r = x;
  assert(r == 0);
  y = 1;
  return arg;
}

void *setter(void *arg) {
  x = 1;
  z = 1;
  return arg;
}

int main(void) {
  pthread_t a, b;
  pthread_create(&a, 0, checker, 0);
  pthread_create(&b, 0, setter, 0);
  pthread_join(a, 0);
  pthread_join(b, 0);
  return y + z == 2 ? 0 : 1;
}
