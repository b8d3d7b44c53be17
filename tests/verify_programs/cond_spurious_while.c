// The waiter waits for `ready` in a `while` loop: correct with spurious wake-ups too (a wait that
// returns without a signal finds `ready` unset and waits again, an iteration that leaves every
// lock as it found it: a spin-wait). Plain `safe` with `irs verify --spurious-wake-ups`
// (tests/spurious_wake_ups.rs); without, the verdict names the wake-ups not explored.
// expect-bugs: none
#include <assert.h>
#include <pthread.h>
pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
pthread_cond_t c = PTHREAD_COND_INITIALIZER;
int ready;
void *waiter(void *a) {
  pthread_mutex_lock(&m);
  while (!ready)
    pthread_cond_wait(&c, &m);
  assert(ready);
  pthread_mutex_unlock(&m);
  return a;
}
int main(void) {
  pthread_t t;
  pthread_create(&t, 0, waiter, 0);
  pthread_mutex_lock(&m);
  ready = 1;
  pthread_cond_signal(&c);
  pthread_mutex_unlock(&m);
  pthread_join(t, 0);
  return 0;
}
