// deadlock_join: main joins T1 while holding the mutex T1 needs. If main locks first, T1 can
// never lock and main waits for it forever: a deadlock through a join.
// Traces (hand count): main's lock before T1's (deadlock) or after T1's unlock (T1 done) = 2.
// expect-traces: 2
// expect-bugs: deadlock
#include <pthread.h>

int x;
pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;

void *worker(void *arg) {
  pthread_mutex_lock(&m);
  x = 1;
  pthread_mutex_unlock(&m);
  return arg;
}

int main(void) {
  pthread_t t;
  pthread_create(&t, 0, worker, 0);
  pthread_mutex_lock(&m);
  pthread_join(t, 0);
  pthread_mutex_unlock(&m);
  return x - 1;
}
