// update_cas_loser_bug: a bug only the failed compare-exchange's order shows. main sets l = 0,
// x = 0; T1 and T2 each try to swap l from 0 to 1. The winner then sets x = 1; the loser (its
// CAS failed: a read of l) asserts x == 1, wrongly assuming the winner is done.
// Traces (hand count): the winner (2 choices); on l, its CAS before the loser's failed one;
// on x, the winner's store before or after the loser's load: 2 x 2 = 4, the same under
// Mazurkiewicz (each word's accesses are ordered either way). The bug: the load first.
// expect-traces: 4
// expect-traces-reads-commute: 4
// expect-bugs: assert
#include <assert.h>
#include <pthread.h>

int l, x;

void *race(void *arg) {
  int expected = 0;
  if (__atomic_compare_exchange_n(&l, &expected, 1, 0, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST))
    __atomic_store_n(&x, 1, __ATOMIC_SEQ_CST);
  else
    assert(__atomic_load_n(&x, __ATOMIC_SEQ_CST) == 1);
  return arg;
}

int main(void) {
  pthread_t a, b;
  __atomic_store_n(&l, 0, __ATOMIC_SEQ_CST);
  __atomic_store_n(&x, 0, __ATOMIC_SEQ_CST);
  pthread_create(&a, 0, race, 0);
  pthread_create(&b, 0, race, 0);
  pthread_join(a, 0);
  pthread_join(b, 0);
  return 0;
}
