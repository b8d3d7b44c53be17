// The setter sets the flag only when it sees that main has not cancelled; when main cancels
// first, main spins for good waiting for the flag, with no thread left that could set it: a
// livelock, reported like a deadlock.
// expect-bugs: deadlock
#include <pthread.h>
volatile int flag, cancelled;
void *setter(void *a) {
  if (!cancelled) flag = 1;
  return a;
}
int main(void) {
  pthread_t t;
  pthread_create(&t, 0, setter, 0);
  cancelled = 1;
  while (!flag)
    ;
  pthread_join(t, 0);
  return 0;
}
