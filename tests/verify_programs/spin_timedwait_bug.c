// The waiter waits for a flag with a timed wait in a loop (a deadline long past: it may time out
// at any moment); main sets the flag in one critical section and the data, with a signal, in
// the next. A wait that times out and finds the flag unset waits again, leaving every lock as
// it found it: a spin-wait. The waiter can see the flag before the data.
// expect-bugs: assert
#include <assert.h>
#include <pthread.h>
#include <time.h>
pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
pthread_cond_t c = PTHREAD_COND_INITIALIZER;
int flag, x;
void *waiter(void *a) {
  struct timespec deadline = {0, 0};
  pthread_mutex_lock(&m);
  while (!flag)
    pthread_cond_timedwait(&c, &m, &deadline);
  assert(x == 1);
  pthread_mutex_unlock(&m);
  return a;
}
int main(void) {
  pthread_t t;
  pthread_create(&t, 0, waiter, 0);
  pthread_mutex_lock(&m);
  flag = 1;
  pthread_mutex_unlock(&m);
  pthread_mutex_lock(&m);
  x = 1;
  pthread_cond_signal(&c);
  pthread_mutex_unlock(&m);
  pthread_join(t, 0);
  return 0;
}
