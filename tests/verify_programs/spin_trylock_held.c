// A thread spins on pthread_mutex_trylock for a mutex main only releases after joining it, in
// the executions where main takes the mutex first: a livelock there (reported as a deadlock:
// the thread spins, main waits to join it); where the thread takes the mutex first it ends.
// expect-bugs: deadlock
#include <pthread.h>
pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
void *t(void *a) {
  while (pthread_mutex_trylock(&m) != 0)
    ;
  pthread_mutex_unlock(&m);
  return 0;
}
int main(void) {
  pthread_t a;
  pthread_create(&a, 0, t, 0);
  pthread_mutex_lock(&m);
  pthread_join(a, 0);
  pthread_mutex_unlock(&m);
  return 0;
}
