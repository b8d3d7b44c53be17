// Two threads take a test-and-set spinlock (`__atomic_exchange_n(&l, 1)` until it returns 0)
// around an increment; main has stored l = 0 first, so the exchange that finds the lock taken
// leaves it as it was: a read (shared_proto::value_model), and for the spin watch an iteration
// that only read, so a thread spinning on a held lock waits as it would on a load. Safe, no
// livelock.
// expect-bugs: none
#include <assert.h>
#include <pthread.h>
int l, x;
void *t(void *a) {
  while (__atomic_exchange_n(&l, 1, __ATOMIC_ACQUIRE))
    ;
  x = x + 1;
  __atomic_store_n(&l, 0, __ATOMIC_RELEASE);
  return a;
}
int main(void) {
  pthread_t a, b;
  __atomic_store_n(&l, 0, __ATOMIC_SEQ_CST);
  pthread_create(&a, 0, t, 0);
  pthread_create(&b, 0, t, 0);
  pthread_join(a, 0);
  pthread_join(b, 0);
  assert(x == 2);
  return 0;
}
