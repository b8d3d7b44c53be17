/* A barrier initialised for 3 parties, but only 2 threads ever call
 * pthread_barrier_wait. Both block forever, and main blocks joining them.
 * Expected: deadlock (in every interleaving). */
#define _POSIX_C_SOURCE 200809L
#include <pthread.h>
#include <stdio.h>

static pthread_barrier_t bar;
static int phase1[2];

static void *worker(void *arg) {
  int id = *(int *)arg;
  phase1[id] = id + 1;
  pthread_barrier_wait(&bar); /* never released: only 2 of 3 arrive */
  return NULL;
}

int main(void) {
  pthread_t t[2];
  int ids[2] = {0, 1};
  pthread_barrier_init(&bar, NULL, 3); /* BUG: should be 2 */
  pthread_create(&t[0], NULL, worker, &ids[0]);
  pthread_create(&t[1], NULL, worker, &ids[1]);
  pthread_join(t[0], NULL);
  pthread_join(t[1], NULL);
  pthread_barrier_destroy(&bar);
  printf("barrier_bug_missing_party: ok\n");
  return 0;
}
