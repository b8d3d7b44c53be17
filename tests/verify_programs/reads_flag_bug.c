// reads_flag_bug: T1 and T2 each read `ready` and, if set, `data`; main writes data, then
// ready, then asserts that at most one reader missed ready. The assertion fails when both read
// ready before main sets it. Reads of ready commute, so fewer traces, but the bug must stay.
// Under reads-commute, per reader: ready read before main's write of ready (then no read of
// data), or after (then data read after its write, forced: data = 1 came earlier): 2 per
// reader, 4 traces; main's final reads of `missed` are after the joins. Under Mazurkiewicz the
// three accesses to ready are totally ordered (6 orders): with main's write first both readers
// read data, in either order (2 x 2 = 4); with it in the middle one reader reads data (2);
// with it last none does (2): 8.
// expect-traces: 8
// expect-traces-reads-commute: 4
// expect-bugs: assert
#include <assert.h>
#include <pthread.h>

int data, ready;
int missed[2];

void *reader(void *arg) {
  int i = (int)(long)arg;
  if (ready)
    missed[i] = (data != 1);
  else
    missed[i] = 1;
  return arg;
}

int main(void) {
  pthread_t a, b;
  pthread_create(&a, 0, reader, (void *)0);
  pthread_create(&b, 0, reader, (void *)1);
  data = 1;
  ready = 1;
  pthread_join(a, 0);
  pthread_join(b, 0);
  assert(missed[0] + missed[1] < 2);
  return 0;
}
