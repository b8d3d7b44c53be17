// end_underscore_exit: T1 ends the process with _exit, which runs no exit handlers: main's
// handler, which always fails, never runs (main's join of T1 never completes, so main never
// returns). T1's store races with main's load before the join. Safe.
// Traces (hand count): T1's _exit before main's load, so main is killed before it (1); main's
// load before or after T1's store, main then killed waiting for the join (2). 3.
// expect-traces: 3
// expect-bugs: none
#include <assert.h>
#include <pthread.h>
#include <unistd.h>

int x;

static void never(void) { assert(0); }

void *quit(void *arg) {
  x = 1;
  _exit(3);
}

int main(void) {
  pthread_t t;
  atexit(never);
  pthread_create(&t, 0, quit, 0);
  int v = x;
  pthread_join(t, 0);
  return v;
}
