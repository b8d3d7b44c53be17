/* A PTHREAD_MUTEX_ERRORCHECK mutex: relocking by the owner returns EDEADLK
 * instead of deadlocking, and unlocking a mutex the caller does not own
 * returns EPERM. Two threads each do that around one increment.
 * Expected: safe. */
#define _POSIX_C_SOURCE 200809L
#include <assert.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>

static pthread_mutex_t m;
static int counter = 0;

static void *thr(void *arg) {
  (void)arg;
  int rc = pthread_mutex_lock(&m);
  assert(rc == 0);
  rc = pthread_mutex_lock(&m); /* relock by owner */
  assert(rc == EDEADLK);
  counter++;
  rc = pthread_mutex_unlock(&m);
  assert(rc == 0);
  rc = pthread_mutex_unlock(&m); /* no longer the owner */
  assert(rc == EPERM);
  return NULL;
}

int main(void) {
  pthread_mutexattr_t attr;
  pthread_mutexattr_init(&attr);
  int rc = pthread_mutexattr_settype(&attr, PTHREAD_MUTEX_ERRORCHECK);
  assert(rc == 0);
  pthread_mutex_init(&m, &attr);
  pthread_mutexattr_destroy(&attr);

  pthread_t t1, t2;
  pthread_create(&t1, NULL, thr, NULL);
  pthread_create(&t2, NULL, thr, NULL);
  pthread_join(t1, NULL);
  pthread_join(t2, NULL);
  assert(counter == 2);
  pthread_mutex_destroy(&m);
  printf("mutex_safe_errorcheck: ok counter=%d\n", counter);
  return 0;
}
