// update_idle_rmw: an exchange of the value already there and an add of 0 leave memory as it
// was: reads (shared_proto::value_model). main stores x = 1 and y = 5; T1 exchanges 1 into x
// and adds 0 to y, T2 does the same, main loads both after creating them.
// Traces (hand count), reads commuting: every access reads: 1. Mazurkiewicz orders the three
// accesses of each word: 3! x 3! = 36, less the orders in which a thread's add comes before
// its own exchange's... no: each thread's two accesses are on different words, so the words'
// orders are independent: 6 x 6 = 36.
// expect-traces: 36
// expect-traces-reads-commute: 1
// expect-bugs: none
#include <assert.h>
#include <pthread.h>

int x, y;

void *idle(void *arg) {
  int old = __atomic_exchange_n(&x, 1, __ATOMIC_SEQ_CST);
  assert(old == 1);
  __atomic_fetch_add(&y, 0, __ATOMIC_SEQ_CST);
  return arg;
}

int main(void) {
  pthread_t a, b;
  x = 1;
  y = 5;
  pthread_create(&a, 0, idle, 0);
  pthread_create(&b, 0, idle, 0);
  int vx = __atomic_load_n(&x, __ATOMIC_SEQ_CST), vy = __atomic_load_n(&y, __ATOMIC_SEQ_CST);
  assert(vx == 1 && vy == 5);
  pthread_join(a, 0);
  pthread_join(b, 0);
  return 0;
}
