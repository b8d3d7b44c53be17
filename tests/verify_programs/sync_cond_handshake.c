// A waiter waits on a condition variable for a flag main sets under the mutex (the usual
// predicate loop): safe in every schedule, whether the signal comes before the wait or after.
// expect-traces: 2
// expect-bugs: none
#include <assert.h>
#include <pthread.h>
pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
pthread_cond_t c = PTHREAD_COND_INITIALIZER;
int flag, seen;
void *waiter(void *a) {
  pthread_mutex_lock(&m);
  while (!flag) pthread_cond_wait(&c, &m);
  seen = flag;
  pthread_mutex_unlock(&m);
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
  assert(seen == 1);
  return 0;
}
