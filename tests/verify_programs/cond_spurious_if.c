// The waiter waits for `ready` under an `if`, not a `while`: correct only if a wait never
// returns without a signal. POSIX allows it to (a spurious wake-up): with spurious wake-ups
// explored (`irs verify --spurious-wake-ups`, tests/spurious_wake_ups.rs) the assertion fails;
// without, irs's condition variables never wake spuriously and the verdict names that bound.
// expect-bugs: none
#include <assert.h>
#include <pthread.h>
pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
pthread_cond_t c = PTHREAD_COND_INITIALIZER;
int ready;
void *waiter(void *a) {
  pthread_mutex_lock(&m);
  if (!ready)
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
