/* A PTHREAD_MUTEX_RECURSIVE mutex: each of two threads locks it, then
 * relocks it (through pthread_mutex_trylock, which must succeed for the
 * owner), increments at both depths, and unlocks twice.
 * Expected: safe. */
#define _POSIX_C_SOURCE 200809L
#include <assert.h>
#include <pthread.h>
#include <stdio.h>

static pthread_mutex_t m;
static int counter = 0;

static void inner(void) {
  int rc = pthread_mutex_trylock(&m); /* owner relocks: depth 2 */
  assert(rc == 0);
  counter++;
  pthread_mutex_unlock(&m);
}

static void *thr(void *arg) {
  (void)arg;
  int rc = pthread_mutex_lock(&m);
  assert(rc == 0);
  rc = pthread_mutex_lock(&m); /* depth 2: must not deadlock */
  assert(rc == 0);
  counter++;
  pthread_mutex_unlock(&m);
  inner();
  pthread_mutex_unlock(&m);
  return NULL;
}

int main(void) {
  pthread_mutexattr_t attr;
  pthread_mutexattr_init(&attr);
  int rc = pthread_mutexattr_settype(&attr, PTHREAD_MUTEX_RECURSIVE);
  assert(rc == 0);
  pthread_mutex_init(&m, &attr);
  pthread_mutexattr_destroy(&attr);

  pthread_t t1, t2;
  pthread_create(&t1, NULL, thr, NULL);
  pthread_create(&t2, NULL, thr, NULL);
  pthread_join(t1, NULL);
  pthread_join(t2, NULL);
  assert(counter == 4);
  rc = pthread_mutex_trylock(&m); /* fully released by both threads */
  assert(rc == 0);
  pthread_mutex_unlock(&m);
  pthread_mutex_destroy(&m);
  printf("mutex_safe_recursive: ok counter=%d\n", counter);
  return 0;
}
