/* Peterson's mutual exclusion for two threads, all shared control variables
 * atomic with seq_cst ordering, correct turn assignment (give the turn to
 * the other thread). The critical section increments a plain counter once
 * per thread and checks occupancy.
 * Expected: safe (terminates under fair scheduling). */
#define _POSIX_C_SOURCE 200809L
#include <assert.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>

static atomic_int want[2];
static atomic_int turn = 0;
static atomic_int inside = 0;
static int counter = 0;

static void *thr(void *arg) {
  int me = *(int *)arg;
  int other = 1 - me;

  atomic_store(&want[me], 1);
  atomic_store(&turn, other);
  while (atomic_load(&want[other]) && atomic_load(&turn) == other)
    ;

  /* critical section */
  int occupants = atomic_fetch_add(&inside, 1);
  assert(occupants == 0);
  counter++;
  atomic_fetch_sub(&inside, 1);

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
  assert(counter == 2);
  printf("spinwait_safe_peterson: ok counter=%d\n", counter);
  return 0;
}
