/* A spin lock released too early: each thread reads the counter inside the
 * lock but writes the incremented value after pthread_spin_unlock. Both
 * threads can read 0 before either writes, losing an update. The counter is
 * an atomic_int (separate atomic_load / atomic_store), so there is no data
 * race: the only defect is the lost update.
 * Expected: assertion violation in some interleavings. */
#define _POSIX_C_SOURCE 200809L
#include <assert.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>

static pthread_spinlock_t s;
static atomic_int counter = 0;

static void *thr(void *arg) {
  (void)arg;
  pthread_spin_lock(&s);
  int tmp = atomic_load(&counter);
  pthread_spin_unlock(&s); /* BUG: unlock before the store */
  atomic_store(&counter, tmp + 1);
  return NULL;
}

int main(void) {
  pthread_spin_init(&s, PTHREAD_PROCESS_PRIVATE);
  pthread_t t1, t2;
  pthread_create(&t1, NULL, thr, NULL);
  pthread_create(&t2, NULL, thr, NULL);
  pthread_join(t1, NULL);
  pthread_join(t2, NULL);
  int final = atomic_load(&counter);
  assert(final == 2);
  pthread_spin_destroy(&s);
  printf("spin_bug_early_unlock: ok counter=%d\n", final);
  return 0;
}
