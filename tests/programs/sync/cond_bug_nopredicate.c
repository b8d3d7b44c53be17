/* A condition variable used as if it were an event, with no predicate:
 * the waiter waits unconditionally; the signaller signals once. If the
 * signaller runs first, the signal is not remembered and the waiter blocks
 * forever (main blocks joining it).
 * Expected: deadlock in some interleavings. */
#define _POSIX_C_SOURCE 200809L
#include <pthread.h>
#include <stdio.h>

static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t c = PTHREAD_COND_INITIALIZER;

static void *waiter(void *arg) {
  (void)arg;
  pthread_mutex_lock(&m);
  pthread_cond_wait(&c, &m); /* BUG: no predicate, no loop */
  pthread_mutex_unlock(&m);
  return NULL;
}

static void *signaller(void *arg) {
  (void)arg;
  pthread_mutex_lock(&m);
  pthread_cond_signal(&c); /* lost if the waiter is not yet waiting */
  pthread_mutex_unlock(&m);
  return NULL;
}

int main(void) {
  pthread_t w, s;
  pthread_create(&w, NULL, waiter, NULL);
  pthread_create(&s, NULL, signaller, NULL);
  pthread_join(w, NULL);
  pthread_join(s, NULL);
  printf("cond_bug_nopredicate: ok\n");
  return 0;
}
