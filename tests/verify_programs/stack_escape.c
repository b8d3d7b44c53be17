// stack_escape: the shared counter is a local of main whose address is passed to two threads
// (an escaping stack slot, named by main's stack and its distance below the top). The threads
// increment it under a mutex. Safe.
// Traces (hand count): the 2 orders of the critical sections.
// expect-traces: 2
// expect-bugs: none
#include <assert.h>
#include <pthread.h>

pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;

void *inc(void *arg) {
  int *counter = arg;
  pthread_mutex_lock(&m);
  *counter = *counter + 1;
  pthread_mutex_unlock(&m);
  return 0;
}

int main(void) {
  int counter = 0;
  pthread_t a, b;
  pthread_create(&a, 0, inc, &counter);
  pthread_create(&b, 0, inc, &counter);
  pthread_join(a, 0);
  pthread_join(b, 0);
  assert(counter == 2);
  return 0;
}
