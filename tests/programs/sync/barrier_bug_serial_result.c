/* Two threads meet at a barrier for 2; the thread that receives
 * PTHREAD_BARRIER_SERIAL_THREAD publishes the combined result AFTER the
 * barrier, but the other thread reads the result right after the barrier
 * without a second barrier round. If the non-serial thread reads first it
 * sees 0. `total` is an atomic_int so there is no data race: the only defect
 * is the missing second synchronisation.
 * Expected: assertion violation in some interleavings. */
#define _POSIX_C_SOURCE 200809L
#include <assert.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>

static pthread_barrier_t bar;
static int part[2];
static atomic_int total = 0;

static void *worker(void *arg) {
  int id = *(int *)arg;
  part[id] = 10 * (id + 1);
  int rc = pthread_barrier_wait(&bar);
  if (rc == PTHREAD_BARRIER_SERIAL_THREAD)
    atomic_store(&total, part[0] + part[1]);
  /* BUG: missing second pthread_barrier_wait(&bar) here */
  assert(atomic_load(&total) == 30);
  return NULL;
}

int main(void) {
  pthread_t t[2];
  int ids[2] = {0, 1};
  pthread_barrier_init(&bar, NULL, 2);
  pthread_create(&t[0], NULL, worker, &ids[0]);
  pthread_create(&t[1], NULL, worker, &ids[1]);
  pthread_join(t[0], NULL);
  pthread_join(t[1], NULL);
  pthread_barrier_destroy(&bar);
  printf("barrier_bug_serial_result: ok total=%d\n", atomic_load(&total));
  return 0;
}
