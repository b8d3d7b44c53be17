/* pthread_cond_timedwait with an absolute deadline computed from a fixed
 * timespec (no clock is read; the deadline lies in the past, so a real run
 * normally times out at once). The waiter is correct whether it times out or
 * is woken: after the wait it only trusts `ready`, and main checks the final
 * state after joining both threads. The wait loop is bounded (3 attempts).
 * Expected: safe. */
#define _POSIX_C_SOURCE 200809L
#include <assert.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <time.h>

static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t c = PTHREAD_COND_INITIALIZER;
static int ready = 0;
static int data = 0;
static int saw_ready = 0;
static int gave_up = 0;   /* timed out (or 3 spurious wake-ups) before ready */

static void *waiter(void *arg) {
  (void)arg;
  const struct timespec base = {1000, 750000000}; /* fixed, not from a clock */
  struct timespec deadline = base;
  deadline.tv_sec += 2;
  deadline.tv_nsec += 500000000;
  if (deadline.tv_nsec >= 1000000000) {
    deadline.tv_sec += 1;
    deadline.tv_nsec -= 1000000000;
  }
  assert(deadline.tv_sec == 1003 && deadline.tv_nsec == 250000000);

  pthread_mutex_lock(&m);
  int rc = 0;
  for (int attempt = 0; attempt < 3 && !ready; attempt++) {
    rc = pthread_cond_timedwait(&c, &m, &deadline);
    assert(rc == 0 || rc == ETIMEDOUT);
    if (rc == ETIMEDOUT)
      break;
  }
  if (ready) {
    assert(data == 42);
    saw_ready = 1;
  } else {
    gave_up = 1;
  }
  pthread_mutex_unlock(&m);
  return NULL;
}

static void *setter(void *arg) {
  (void)arg;
  pthread_mutex_lock(&m);
  data = 42;
  ready = 1;
  pthread_cond_signal(&c);
  pthread_mutex_unlock(&m);
  return NULL;
}

int main(void) {
  pthread_t w, s;
  pthread_create(&w, NULL, waiter, NULL);
  pthread_create(&s, NULL, setter, NULL);
  pthread_join(w, NULL);
  pthread_join(s, NULL);
  assert(ready == 1 && data == 42);
  assert(saw_ready + gave_up == 1); /* exactly one outcome */
  printf("cond_safe_timedwait: ok\n");
  return 0;
}
