/* An "increment" of an atomic_int done as a separate atomic_load and
 * atomic_store instead of atomic_fetch_add. Each access is atomic (no data
 * race) but the read-modify-write is not, so one update can be lost.
 * Expected: assertion violation in some interleavings. */
#define _POSIX_C_SOURCE 200809L
#include <assert.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>

static atomic_int counter = 0;

static void *thr(void *arg) {
  (void)arg;
  int v = atomic_load(&counter);
  atomic_store(&counter, v + 1); /* BUG: not atomic as a whole */
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
  printf("atomic_bug_load_store: ok counter=%d\n", final);
  return 0;
}
