/* The spinner waits for `ready`, which the setter only sets if it wins a
 * race against main's cancellation. If main's cancel is seen first, `ready`
 * is never set: the spinner busy-waits forever (a livelock -- it keeps
 * running, it is never blocked) and main waits forever joining it.
 * Expected: spins forever in some interleavings (non-termination). */
#define _POSIX_C_SOURCE 200809L
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>

static atomic_int ready = 0;
static atomic_int cancelled = 0;

static void *spinner(void *arg) {
  (void)arg;
  while (!atomic_load(&ready))
    ;
  return NULL;
}

static void *setter(void *arg) {
  (void)arg;
  if (!atomic_load(&cancelled)) /* BUG: the flag is only set if we win */
    atomic_store(&ready, 1);
  return NULL;
}

int main(void) {
  pthread_t sp, se;
  pthread_create(&sp, NULL, spinner, NULL);
  pthread_create(&se, NULL, setter, NULL);
  atomic_store(&cancelled, 1);
  pthread_join(se, NULL);
  pthread_join(sp, NULL);
  printf("spinwait_bug_lost_flag: ok\n");
  return 0;
}
