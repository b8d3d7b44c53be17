/* Two threads each atomic_fetch_add a shared counter twice. Every returned
 * old value is distinct and in 0..3, and the final value is 4.
 * Expected: safe. */
#define _POSIX_C_SOURCE 200809L
#include <assert.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>

static atomic_int counter = 0;
static atomic_int seen_mask = 0; /* bit k set when some fetch_add returned k */

static void *thr(void *arg) {
  (void)arg;
  for (int i = 0; i < 2; i++) {
    int old = atomic_fetch_add(&counter, 1);
    assert(old >= 0 && old < 4);
    int prev = atomic_fetch_or(&seen_mask, 1 << old);
    assert((prev & (1 << old)) == 0); /* no two increments saw the same value */
  }
  return NULL;
}

int main(void) {
  pthread_t t1, t2;
  pthread_create(&t1, NULL, thr, NULL);
  pthread_create(&t2, NULL, thr, NULL);
  pthread_join(t1, NULL);
  pthread_join(t2, NULL);
  assert(atomic_load(&counter) == 4);
  assert(atomic_load(&seen_mask) == 0xF);
  printf("atomic_safe_fetch_add: ok counter=%d\n", atomic_load(&counter));
  return 0;
}
