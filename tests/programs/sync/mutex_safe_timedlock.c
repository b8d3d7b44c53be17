/* pthread_mutex_timedlock with a fixed absolute deadline in the past (no
 * clock is read). POSIX: timedlock never fails with a timeout if the mutex
 * can be locked immediately; otherwise, with an expired deadline, it returns
 * ETIMEDOUT. Each of two threads either gets the lock (and increments) or
 * times out. At least one thread must succeed: whichever attempts first
 * either finds the mutex free or finds it held by the other thread, which
 * then succeeded.
 * Expected: safe. */
#define _POSIX_C_SOURCE 200809L
#include <assert.h>
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <time.h>

static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
static int counter = 0;
static atomic_int acquired = 0;
static atomic_int timeouts = 0;

static void *thr(void *arg) {
  (void)arg;
  const struct timespec deadline = {1, 0}; /* 1970-01-01 00:00:01 */
  int rc = pthread_mutex_timedlock(&m, &deadline);
  if (rc == 0) {
    counter++;
    atomic_fetch_add(&acquired, 1);
    pthread_mutex_unlock(&m);
  } else {
    assert(rc == ETIMEDOUT);
    atomic_fetch_add(&timeouts, 1);
  }
  return NULL;
}

int main(void) {
  pthread_t t1, t2;
  pthread_create(&t1, NULL, thr, NULL);
  pthread_create(&t2, NULL, thr, NULL);
  pthread_join(t1, NULL);
  pthread_join(t2, NULL);
  int acq = atomic_load(&acquired);
  assert(acq + atomic_load(&timeouts) == 2);
  assert(acq >= 1 && acq <= 2);
  assert(counter == acq);
  printf("mutex_safe_timedlock: ok acquired=%d\n", acq);
  return 0;
}
