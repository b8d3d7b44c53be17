/* Three threads compute in two phases separated by a reusable barrier for 3.
 * Phase 1: thread i writes in[i] = i + 1.
 * Barrier 1: the thread that gets PTHREAD_BARRIER_SERIAL_THREAD sums in[]
 *            into total (every thread also checks the sum itself).
 * Barrier 2: every thread checks total.
 * Exactly one thread per barrier round gets the serial value; main asserts
 * that after joining.
 * Expected: safe. */
#define _POSIX_C_SOURCE 200809L
#include <assert.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>

#define NT 3

static pthread_barrier_t bar;
static int in[NT];
static int total = 0;
static atomic_int serial_round1 = 0;
static atomic_int serial_round2 = 0;

static void *worker(void *arg) {
  int id = *(int *)arg;
  in[id] = id + 1;

  int rc = pthread_barrier_wait(&bar);
  assert(rc == 0 || rc == PTHREAD_BARRIER_SERIAL_THREAD);
  int sum = 0;
  for (int i = 0; i < NT; i++)
    sum += in[i];
  assert(sum == 6);
  if (rc == PTHREAD_BARRIER_SERIAL_THREAD) {
    atomic_fetch_add(&serial_round1, 1);
    total = sum;
  }

  rc = pthread_barrier_wait(&bar);
  assert(rc == 0 || rc == PTHREAD_BARRIER_SERIAL_THREAD);
  if (rc == PTHREAD_BARRIER_SERIAL_THREAD)
    atomic_fetch_add(&serial_round2, 1);
  assert(total == 6);
  return NULL;
}

int main(void) {
  pthread_t t[NT];
  int ids[NT];
  int rc = pthread_barrier_init(&bar, NULL, NT);
  assert(rc == 0);
  for (int i = 0; i < NT; i++) {
    ids[i] = i;
    pthread_create(&t[i], NULL, worker, &ids[i]);
  }
  for (int i = 0; i < NT; i++)
    pthread_join(t[i], NULL);
  assert(atomic_load(&serial_round1) == 1);
  assert(atomic_load(&serial_round2) == 1);
  assert(total == 6);
  pthread_barrier_destroy(&bar);
  printf("barrier_safe_phases: ok total=%d\n", total);
  return 0;
}
