// reach_error_race: SV-COMP style. Two threads each add their id to `sum` under a mutex and
// count themselves in `done` without one; main calls reach_error() when the count is wrong
// (an update of `done` was lost).
// Traces (hand count): the mutex orders the sum updates (2 ways); with either order, the two
// threads' load/store pairs of `done` interleave in 4!/(2!2!) = 6 ways = 12 (4 of them lose
// an update of `done`).
// expect-traces: 12
// expect-bugs: reach_error
#include <pthread.h>

void reach_error(void) {}

int sum, done;
pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;

void *worker(void *arg) {
  pthread_mutex_lock(&m);
  sum = sum + (int)(long)arg;
  pthread_mutex_unlock(&m);
  done = done + 1;
  return 0;
}

int main(void) {
  pthread_t a, b;
  pthread_create(&a, 0, worker, (void *)1L);
  pthread_create(&b, 0, worker, (void *)2L);
  pthread_join(a, 0);
  pthread_join(b, 0);
  if (sum != 3 || done != 2)
    reach_error();
  return 0;
}
