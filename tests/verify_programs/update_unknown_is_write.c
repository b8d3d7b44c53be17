// update_unknown_is_write: the value model's conservative side. x is never written before T1's
// compare-exchange of 5 for 6, so the model does not know the value it finds (0, from the
// program's image) and takes it as a write, although it fails; T2 loads x.
// Traces (hand count), reads commuting: the CAS is a write, ordered with the load: 2 (the
// oracle labels with the same model). Mazurkiewicz: 2.
// expect-traces: 2
// expect-traces-reads-commute: 2
// expect-bugs: none
#include <assert.h>
#include <pthread.h>

int x;

void *try_swap(void *arg) {
  int expected = 5;
  assert(!__atomic_compare_exchange_n(&x, &expected, 6, 0, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST));
  return arg;
}

void *look(void *arg) {
  assert(__atomic_load_n(&x, __ATOMIC_SEQ_CST) == 0);
  return arg;
}

int main(void) {
  pthread_t a, b;
  pthread_create(&a, 0, try_swap, 0);
  pthread_create(&b, 0, look, 0);
  pthread_join(a, 0);
  pthread_join(b, 0);
  return 0;
}
