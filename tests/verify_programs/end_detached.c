// end_detached: a detached thread reads what main writes just before returning; it fails when
// it reads before the write. The end may also cut it off before it reads at all.
// Traces (hand count): T1 cut before its load (1); load before main's store: the assertion
// fails, T1 halts (1); load after the store: T1 then cut before or after its exit (2). 4.
// expect-traces: 4
// expect-bugs: assert
#include <assert.h>
#include <pthread.h>

int ready;

void *reader(void *arg) {
  int r = ready;
  assert(r == 1);
  return arg;
}

int main(void) {
  pthread_t t;
  pthread_create(&t, 0, reader, 0);
  pthread_detach(t);
  ready = 1;
  return 0;
}
