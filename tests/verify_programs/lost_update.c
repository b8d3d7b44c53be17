// lost_update: two threads increment a shared counter without a lock (load, then store).
// An update is lost when both load before either stores: main's `assert(x == 2)` fails
// under those schedules only.
// Traces (hand count): the four accesses to x of T1 (load a, store b) and T2 (load c, store d)
// in any order respecting a<b, c<d: 4!/(2!2!) = 6 orders; main's final load comes last.
// expect-traces: 6
// With reads commuting, the two loads a and c are independent: acbd~cabd and acdb~cadb, so 4.
// expect-traces-reads-commute: 4
// expect-bugs: assert
#include <assert.h>
#include <pthread.h>

int x;

void *inc(void *arg) {
  x = x + 1;
  return arg;
}

int main(void) {
  pthread_t a, b;
  pthread_create(&a, 0, inc, 0);
  pthread_create(&b, 0, inc, 0);
  pthread_join(a, 0);
  pthread_join(b, 0);
  assert(x == 2);
  return 0;
}
