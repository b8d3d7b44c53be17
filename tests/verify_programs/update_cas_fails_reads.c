// update_cas_fails_reads: a compare-exchange that fails leaves memory as it was: a read, which
// commutes with other reads (shared_proto::value_model). main stores x = 0; T1 and T2 each try
// to swap 0 for their own value once, T3 loads x.
// Traces (hand count), reads commuting: the CAS that comes first succeeds (2 choices), the
// other one finds its value and fails, a read; T3's load comes before the first CAS or after
// it, and after it the failed CAS and the load commute: 2 x 2 = 4. Mazurkiewicz orders all
// three accesses: 3! = 6. (Taken as writes, as before the value model: 2 x 3 = 6 either way.)
// expect-traces: 6
// expect-traces-reads-commute: 4
// expect-bugs: none
#include <assert.h>
#include <pthread.h>

int x;

void *swap(void *arg) {
  int expected = 0;
  int mine = (int)(long)arg;
  if (!__atomic_compare_exchange_n(&x, &expected, mine, 0, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST))
    assert(expected == 3 - mine);
  return 0;
}

void *look(void *arg) {
  int v = __atomic_load_n(&x, __ATOMIC_SEQ_CST);
  assert(v >= 0 && v <= 2);
  return arg;
}

int main(void) {
  pthread_t a, b, c;
  __atomic_store_n(&x, 0, __ATOMIC_SEQ_CST);
  pthread_create(&a, 0, swap, (void *)1L);
  pthread_create(&b, 0, swap, (void *)2L);
  pthread_create(&c, 0, look, 0);
  pthread_join(a, 0);
  pthread_join(b, 0);
  pthread_join(c, 0);
  return 0;
}
