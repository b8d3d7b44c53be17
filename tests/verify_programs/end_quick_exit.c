// end_quick_exit: T1 ends the process with quick_exit: its at_quick_exit handler runs on T1 while
// main still runs, and fails when main has written `x` already; main's atexit handler never runs
// (quick_exit runs none of them), so its failing assertion is never reached.
// expect-bugs: assert
#include <assert.h>
#include <pthread.h>
#include <stdlib.h>

int x;

static void quick_check(void) { assert(x == 0); }
static void never(void) { assert(0); }

void *quit(void *arg) {
  at_quick_exit(quick_check);
  quick_exit(0);
}

int main(void) {
  pthread_t t;
  atexit(never);
  pthread_create(&t, 0, quit, 0);
  x = 1;
  pthread_join(t, 0);
  return 0;
}
