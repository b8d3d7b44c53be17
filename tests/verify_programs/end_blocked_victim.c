// end_blocked_victim: main returns holding a mutex that T1 waits for, so the end kills T1 while
// it is blocked. T1 fails if it takes the mutex first (before main's store), which only the
// lock's move before main's lock shows: the blocked operation must not be forgotten.
// Traces (hand count): T1 locks first and fails (it halts holding the mutex, main then waits
// for good), or main locks first and T1 is killed while it waits. 2.
// expect-traces: 2
// expect-bugs: assert
#include <assert.h>
#include <pthread.h>

pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
int x;

void *taker(void *arg) {
  pthread_mutex_lock(&m);
  assert(x == 1);
  pthread_mutex_unlock(&m);
  return arg;
}

int main(void) {
  pthread_t t;
  pthread_create(&t, 0, taker, 0);
  pthread_mutex_lock(&m);
  x = 1;
  return 0;
}
