// main polls a flag that no thread ever sets, releasing the mutex between two looks; the worker
// takes the mutex once (in one of main's windows, or before main) and ends. Once the worker is
// done, nothing can change what main reads: a livelock, reported like a deadlock.
// expect-bugs: deadlock
#include <pthread.h>
pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
int done, y;
void *worker(void *a) {
  pthread_mutex_lock(&m);
  y = 1;
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
  pthread_mutex_unlock(&m);
  pthread_join(t, 0);
  return 0;
}
