// end_flag: main creates a thread that sets a flag, asserts the flag is still clear and returns
// without joining. The process's end (main's return) cuts the thread off wherever it stands, so
// the thread may set the flag before main's check (the assertion fails) or not at all.
// Traces (hand count): T1 cut before its store (1); T1's store before main's load: the
// assertion fails and main halts, so there is no end and T1 runs out (1); after the load: T1 cut
// after its store or after its exit (2). 4 in all.
// expect-traces: 4
// expect-bugs: assert
#include <assert.h>
#include <pthread.h>

int flag;

void *setter(void *arg) {
  flag = 1;
  return arg;
}

int main(void) {
  pthread_t t;
  pthread_create(&t, 0, setter, 0);
  assert(flag == 0);
  return 0;
}
