// two_failures: two threads can each fail an assertion, and T2 can fail only in executions
// where T1 fails too. A failing thread halts and the others go on, so both fail in such an
// execution; which failure comes FIRST (and is the execution's outcome) is not fixed by the
// trace: T1 fails at its last event (its store of w), T2 at its load of z, and those two are
// independent. A verifier that runs one interleaving per trace sees T2's failure only if it
// orders T2's load of z before T1's store of w; the oracle, which runs every interleaving,
// sees both failures. Both are bugs of the program.
// T1: load y, store z (= what it read), store w, then assert(r == 0): fails iff it read y = 1.
// T2: store y = 1, load z, then assert(t == 0): fails iff it read z = 1, i.e. after T1 read
// y = 1 and stored it.
// Traces (hand count): T1's load of y before T2's store of y (T1 passes, T2 reads z before or
// after T1's store: 2), or after it (T1 fails; T2's load of z before T1's store of z: T2
// passes; after it: both fail) = 4.
// expect-traces: 4
// expect-bugs: assert
#include <assert.h>
#include <pthread.h>

int y, z, w;

void *t1(void *arg) {
  int r = y;
  z = r;
  w = 1;
  assert(r == 0);
  return arg;
}

void *t2(void *arg) {
  y = 1;
  int t = z;
  assert(t == 0);
  return arg;
}

int main(void) {
  pthread_t a, b;
  pthread_create(&a, 0, t1, 0);
  pthread_create(&b, 0, t2, 0);
  pthread_join(a, 0);
  pthread_join(b, 0);
  return 0;
}
