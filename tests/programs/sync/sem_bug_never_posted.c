/* A waiter blocks on `done` until a worker posts it. The worker skips its
 * work (and forgets to post) when it sees that main has cancelled the
 * request. If main's cancel is visible before the worker checks it, nobody
 * ever posts `done`: the waiter blocks forever and main blocks joining it.
 * Expected: deadlock in some interleavings. */
#define _POSIX_C_SOURCE 200809L
#include <assert.h>
#include <pthread.h>
#include <semaphore.h>
#include <stdatomic.h>
#include <stdio.h>

static sem_t done;
static atomic_int cancelled = 0;
static int result = 0;

static void *worker(void *arg) {
  (void)arg;
  if (atomic_load(&cancelled))
    return NULL; /* BUG: early exit without sem_post(&done) */
  result = 7;
  sem_post(&done);
  return NULL;
}

static void *waiter(void *arg) {
  (void)arg;
  sem_wait(&done);
  assert(result == 7);
  return NULL;
}

int main(void) {
  sem_init(&done, 0, 0);
  pthread_t w, k;
  pthread_create(&w, NULL, waiter, NULL);
  pthread_create(&k, NULL, worker, NULL);
  atomic_store(&cancelled, 1);
  pthread_join(w, NULL);
  pthread_join(k, NULL);
  sem_destroy(&done);
  printf("sem_bug_never_posted: ok\n");
  return 0;
}
