/* Lost wake-up: the waiter tests the predicate with `if` OUTSIDE the mutex,
 * then locks and waits unconditionally. If the notifier sets the flag and
 * signals between the waiter's test and its pthread_cond_wait, the signal is
 * lost and the waiter blocks forever (and main blocks joining it).
 * `ready` is an atomic_int so that the program has no data race; the only
 * defect is the lost wake-up.
 * Expected: deadlock in some interleavings. */
#define _POSIX_C_SOURCE 200809L
#include <assert.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>

static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t c = PTHREAD_COND_INITIALIZER;
static atomic_int ready = 0;
static int data = 0;

static void *waiter(void *arg) {
  (void)arg;
  if (!atomic_load(&ready)) {      /* BUG: predicate checked outside the mutex */
    pthread_mutex_lock(&m);
    pthread_cond_wait(&c, &m);     /* BUG: no re-check of the predicate */
    pthread_mutex_unlock(&m);
  }
  pthread_mutex_lock(&m);
  assert(data == 42);
  pthread_mutex_unlock(&m);
  return NULL;
}

static void *notifier(void *arg) {
  (void)arg;
  pthread_mutex_lock(&m);
  data = 42;
  atomic_store(&ready, 1);
  pthread_cond_signal(&c);
  pthread_mutex_unlock(&m);
  return NULL;
}

int main(void) {
  pthread_t w, n;
  pthread_create(&w, NULL, waiter, NULL);
  pthread_create(&n, NULL, notifier, NULL);
  pthread_join(w, NULL);
  pthread_join(n, NULL);
  printf("cond_bug_lostwakeup: ok\n");
  return 0;
}
