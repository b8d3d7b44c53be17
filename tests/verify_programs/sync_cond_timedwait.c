// A timed wait either is signalled or times out; a timeout is an outcome the exploration takes
// wherever no signal has come. The program asserts (wrongly) that it never times out: the
// schedules where the waiter times out before main's signal fail.
// expect-bugs: assert
#include <assert.h>
#include <errno.h>
#include <pthread.h>
#include <time.h>
pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
pthread_cond_t c = PTHREAD_COND_INITIALIZER;
int flag;
void *waiter(void *a) {
  struct timespec ts = {1, 0};
  int rc = 0;
  pthread_mutex_lock(&m);
  while (!flag && rc == 0) rc = pthread_cond_timedwait(&c, &m, &ts);
  pthread_mutex_unlock(&m);
  assert(rc != ETIMEDOUT);
  return a;
}
int main(void) {
  pthread_t t;
  pthread_create(&t, 0, waiter, 0);
  pthread_mutex_lock(&m);
  flag = 1;
  pthread_cond_signal(&c);
  pthread_mutex_unlock(&m);
  pthread_join(t, 0);
  return 0;
}
