/* A hand-rolled "once" with a check-then-act flag instead of pthread_once:
 *   if (!initialized) { init(); initialized = 1; }
 * Both threads can see initialized == 0 before either sets it, so init runs
 * twice. The flag and the run counter are atomics (the flag is read and
 * written with separate atomic_load / atomic_store, not an atomic RMW), so
 * there is no data race: the only defect is the double initialisation.
 * Expected: assertion violation in some interleavings. */
#define _POSIX_C_SOURCE 200809L
#include <assert.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>

static atomic_int initialized = 0;
static atomic_int init_runs = 0;

static void init(void) {
  atomic_fetch_add(&init_runs, 1);
}

static void my_once(void) {
  if (!atomic_load(&initialized)) { /* BUG: not atomic with the store below */
    init();
    atomic_store(&initialized, 1);
  }
}

static void *user(void *arg) {
  (void)arg;
  my_once();
  return NULL;
}

int main(void) {
  pthread_t t1, t2;
  pthread_create(&t1, NULL, user, NULL);
  pthread_create(&t2, NULL, user, NULL);
  pthread_join(t1, NULL);
  pthread_join(t2, NULL);
  int runs = atomic_load(&init_runs);
  assert(runs == 1);
  printf("once_bug_flag: ok init_runs=%d\n", runs);
  return 0;
}
