/* Peterson's algorithm with the turn assignment wrong: each thread sets
 * turn to ITSELF instead of to the other thread. Then the thread that
 * arrives second sees turn == me and walks straight in while the first is
 * still inside. The counter is an atomic_int incremented by separate
 * atomic_load / atomic_store (no data race); mutual exclusion violation is
 * detected by the occupancy assertion, and can also lose an update.
 * No thread can spin forever here: both spinning would need turn == 1 and
 * turn == 0 at the same time.
 * Expected: assertion violation in some interleavings. */
#define _POSIX_C_SOURCE 200809L
#include <assert.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>

static atomic_int want[2];
static atomic_int turn = 0;
static atomic_int inside = 0;
static atomic_int counter = 0;

static void *thr(void *arg) {
  int me = *(int *)arg;
  int other = 1 - me;

  atomic_store(&want[me], 1);
  atomic_store(&turn, me); /* BUG: should be atomic_store(&turn, other) */
  while (atomic_load(&want[other]) && atomic_load(&turn) == other)
    ;

  /* critical section */
  int occupants = atomic_fetch_add(&inside, 1);
  int tmp = atomic_load(&counter);
  atomic_store(&counter, tmp + 1);
  atomic_fetch_sub(&inside, 1);
  assert(occupants == 0);

  atomic_store(&want[me], 0);
  return NULL;
}

int main(void) {
  pthread_t t[2];
  int ids[2] = {0, 1};
  atomic_init(&want[0], 0);
  atomic_init(&want[1], 0);
  pthread_create(&t[0], NULL, thr, &ids[0]);
  pthread_create(&t[1], NULL, thr, &ids[1]);
  pthread_join(t[0], NULL);
  pthread_join(t[1], NULL);
  int final = atomic_load(&counter);
  assert(final == 2);
  printf("spinwait_bug_peterson_turn: ok counter=%d\n", final);
  return 0;
}
