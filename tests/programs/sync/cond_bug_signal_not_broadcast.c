/* Same gate as cond_safe_broadcast.c, but main uses pthread_cond_signal
 * instead of pthread_cond_broadcast. If both waiters are already blocked in
 * pthread_cond_wait when main signals, only one is woken; the other waits
 * forever and main blocks in pthread_join.
 * Expected: deadlock in some interleavings. */
#define _POSIX_C_SOURCE 200809L
#include <assert.h>
#include <pthread.h>
#include <stdio.h>

static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t opened = PTHREAD_COND_INITIALIZER;
static int gate_open = 0;
static int passed = 0;

static void *waiter(void *arg) {
  (void)arg;
  pthread_mutex_lock(&m);
  while (!gate_open)
    pthread_cond_wait(&opened, &m);
  passed++;
  pthread_mutex_unlock(&m);
  return NULL;
}

int main(void) {
  pthread_t t1, t2;
  pthread_create(&t1, NULL, waiter, NULL);
  pthread_create(&t2, NULL, waiter, NULL);

  pthread_mutex_lock(&m);
  gate_open = 1;
  pthread_cond_signal(&opened); /* BUG: should be pthread_cond_broadcast */
  pthread_mutex_unlock(&m);

  pthread_join(t1, NULL);
  pthread_join(t2, NULL);
  assert(passed == 2);
  printf("cond_bug_signal_not_broadcast: ok passed=%d\n", passed);
  return 0;
}
