// A recursive mutex locked twice by its owner (no deadlock) and an error-checking one locked
// again by its owner (EDEADLK) and unlocked by a thread that does not hold it (EPERM). Safe.
// expect-bugs: none
#define _GNU_SOURCE
#include <assert.h>
#include <errno.h>
#include <pthread.h>
pthread_mutex_t r = PTHREAD_RECURSIVE_MUTEX_INITIALIZER_NP;
pthread_mutex_t e = PTHREAD_ERRORCHECK_MUTEX_INITIALIZER_NP;
int counter;
void *other(void *a) {
  pthread_mutex_lock(&r);
  pthread_mutex_lock(&r);
  counter++;
  pthread_mutex_unlock(&r);
  pthread_mutex_unlock(&r);
  if (pthread_mutex_trylock(&e) == 0) pthread_mutex_unlock(&e);
  return a;
}
int main(void) {
  pthread_t t;
  pthread_create(&t, 0, other, 0);
  pthread_mutex_lock(&r);
  counter++;
  pthread_mutex_unlock(&r);
  assert(pthread_mutex_lock(&e) == 0);
  assert(pthread_mutex_lock(&e) == EDEADLK);
  pthread_mutex_unlock(&e);
  assert(pthread_mutex_unlock(&e) == EPERM);
  pthread_join(t, 0);
  assert(counter == 2);
  return 0;
}
