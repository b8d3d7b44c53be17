// Two threads take a compare-exchange spinlock (retry CAS(&l, 0 -> 1) until it succeeds); a
// failed CAS leaves l as it was (a read, and an iteration that only read for the spin watch).
// The bug: each thread writes its increment back after releasing the lock, so the other can
// read x in between and one increment is lost.
// expect-bugs: assert
#include <assert.h>
#include <pthread.h>
int l, x;
void *t(void *a) {
  int e;
  do
    e = 0;
  while (!__atomic_compare_exchange_n(&l, &e, 1, 0, __ATOMIC_ACQUIRE, __ATOMIC_RELAXED));
  int v = x;
  __atomic_store_n(&l, 0, __ATOMIC_RELEASE);
  x = v + 1;
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
