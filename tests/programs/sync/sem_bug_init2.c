/* A semaphore meant as a mutex but initialised to 2, so both threads can be
 * inside the "critical section" at once. Each thread increments the counter
 * by a separate load and store; if both load before either stores, one
 * update is lost. The counter is an atomic_int (accessed by plain
 * atomic_load / atomic_store) so there is no data race: the only defect is
 * the lost update.
 * Expected: assertion violation in some interleavings. */
#define _POSIX_C_SOURCE 200809L
#include <assert.h>
#include <pthread.h>
#include <semaphore.h>
#include <stdatomic.h>
#include <stdio.h>

static sem_t lock;
static atomic_int counter = 0;

static void *incr(void *arg) {
  (void)arg;
  sem_wait(&lock);
  int tmp = atomic_load(&counter);
  atomic_store(&counter, tmp + 1);
  sem_post(&lock);
  return NULL;
}

int main(void) {
  sem_init(&lock, 0, 2); /* BUG: should be 1 */
  pthread_t a, b;
  pthread_create(&a, NULL, incr, NULL);
  pthread_create(&b, NULL, incr, NULL);
  pthread_join(a, NULL);
  pthread_join(b, NULL);
  int final = atomic_load(&counter);
  assert(final == 2);
  sem_destroy(&lock);
  printf("sem_bug_init2: ok counter=%d\n", final);
  return 0;
}
