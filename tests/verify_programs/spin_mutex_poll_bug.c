// As spin_mutex_poll.c, but the worker sets the flag in one critical section and the data in
// the next: main, polling, can see the flag between the two.
// expect-bugs: assert
#include <assert.h>
#include <pthread.h>
pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
int done, x;
void *worker(void *a) {
  pthread_mutex_lock(&m);
  done = 1;
  pthread_mutex_unlock(&m);
  pthread_mutex_lock(&m);
  x = 1;
  pthread_mutex_unlock(&m);
  return a;
}
int main(void) {
  pthread_t t;
  pthread_create(&t, 0, worker, 0);
  pthread_mutex_lock(&m);
  while (!done) {
    pthread_mutex_unlock(&m);
    pthread_mutex_lock(&m);
  }
  assert(x == 1);
  pthread_mutex_unlock(&m);
  pthread_join(t, 0);
  return 0;
}
