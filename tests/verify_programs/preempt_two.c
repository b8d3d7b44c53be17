// preempt_two: a bug that needs two preemptions. T1 sets x and clears it again, main does the
// same with y after creating T1 and the checker T2, which asserts that it never sees both set.
// T2 sees both only if main is preempted between its two stores (1), T1 likewise (2), and T2
// runs in both windows: main creates T1 and T2 and sets y (preempted: 1), T1 sets x (preempted:
// 2), T2 reads x and y. No interleaving with fewer reaches it: each store pair must be split
// by a switch away from a thread that is still enabled.
// Traces (hand count), reads commuting: each of T2's loads before, between or after its
// variable's two stores: 3 x 3 = 9 (T2's load of y cannot precede main's creation of T2, and
// main's stores come after it). Mazurkiewicz orders the same accesses (each variable has one
// reader): 9. The bug: both loads between the stores.
// expect-traces: 9
// expect-traces-reads-commute: 9
// expect-bugs: assert
// expect-bug-preemptions: 2
#include <assert.h>
#include <pthread.h>

int x, y;

void *set_x(void *a) {
  x = 1;
  x = 0;
  return a;
}

void *check(void *a) {
  int seen_x = x, seen_y = y;
  assert(!(seen_x && seen_y));
  return a;
}

int main(void) {
  pthread_t t1, t2;
  pthread_create(&t1, 0, set_x, 0);
  pthread_create(&t2, 0, check, 0);
  y = 1;
  y = 0;
  pthread_join(t1, 0);
  pthread_join(t2, 0);
  return 0;
}
