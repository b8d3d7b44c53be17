// main polls a flag under a mutex, releasing the mutex between two looks; the worker sets the
// data, then the flag, under the mutex. An iteration that finds the flag unset leaves the mutex
// as it found it: a spin-wait, halted when nobody took the mutex in between; the worker blocked
// on the mutex then could have taken it in that window, which is explored.
// expect-bugs: none
#include <assert.h>
#include <pthread.h>
pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
int done, x;
void *worker(void *a) {
  pthread_mutex_lock(&m);
  x = 1;
  done = 1;
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
