/* Two threads increment a shared counter through bump(), which by mistake
 * takes the READ lock instead of the write lock. Read locks are shared, so
 * both threads can be inside at once and one increment can be lost. The
 * counter is an atomic_int accessed by separate atomic_load / atomic_store,
 * so there is no data race: the only defect is the lost update.
 * Expected: assertion violation in some interleavings. */
#define _POSIX_C_SOURCE 200809L
#include <assert.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>

static pthread_rwlock_t rw = PTHREAD_RWLOCK_INITIALIZER;
static atomic_int counter = 0;

static void bump(void) {
  pthread_rwlock_rdlock(&rw); /* BUG: should be pthread_rwlock_wrlock */
  int tmp = atomic_load(&counter);
  atomic_store(&counter, tmp + 1);
  pthread_rwlock_unlock(&rw);
}

static void *thr(void *arg) {
  (void)arg;
  bump();
  return NULL;
}

int main(void) {
  pthread_t t1, t2;
  pthread_create(&t1, NULL, thr, NULL);
  pthread_create(&t2, NULL, thr, NULL);
  pthread_join(t1, NULL);
  pthread_join(t2, NULL);
  int final = atomic_load(&counter);
  assert(final == 2);
  printf("rwlock_bug_read_for_write: ok counter=%d\n", final);
  return 0;
}
