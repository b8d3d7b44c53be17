// A thread spins on pthread_mutex_trylock until main, which holds the mutex while it creates the
// thread, lets it go: the loop's header starts with a routed call (the trylock), and a failed
// trylock is a read of the mutex that main's unlock changes. Safe, no livelock.
// expect-bugs: none
#include <assert.h>
#include <pthread.h>
pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
int x;
void *t(void *a) {
  while (pthread_mutex_trylock(&m) != 0)
    ;
  x = x + 1;
  pthread_mutex_unlock(&m);
  return 0;
}
int main(void) {
  pthread_t a;
  pthread_mutex_lock(&m);
  pthread_create(&a, 0, t, 0);
  x = x + 1;
  pthread_mutex_unlock(&m);
  pthread_join(a, 0);
  assert(x == 2);
  return 0;
}
