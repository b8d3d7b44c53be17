// end_two_exits: two threads call exit with different statuses; only one end happens, and the
// other thread waits for good until the end kills it. main's exit handler reads `winner` twice:
// the other thread still runs while the handlers do (they are events like any other), so it can
// write `winner` between the two reads and fail the handler's assertion.
// expect-bugs: assert
#include <assert.h>
#include <pthread.h>
#include <stdlib.h>

int winner;

static void check(void) {
  int a = winner;
  int b = winner;
  assert(a == b);
}

void *quit(void *arg) {
  winner = (int)(long)arg;
  exit((int)(long)arg);
}

int main(void) {
  pthread_t a, b;
  atexit(check);
  pthread_create(&a, 0, quit, (void *)1);
  pthread_create(&b, 0, quit, (void *)2);
  pthread_join(a, 0);
  pthread_join(b, 0);
  return 0;
}
