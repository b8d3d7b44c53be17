// reads_two_words: T1 reads x then y, T2 reads x; main writes x then y. Under reads-commute a
// trace is, per read, whether it comes before main's write of its word: T1 2 x 2, T2 2: 8 (every
// combination is consistent: wx < T1.x < T1.y < wy and the others order nothing backwards).
// Under Mazurkiewicz x's three accesses are totally ordered (3! = 6) and y's two (2), every
// pair of orders consistent: 12. Safe.
// expect-traces: 12
// expect-traces-reads-commute: 8
// expect-bugs: none
#include <pthread.h>

int x, y;
int seen[3];

void *both(void *arg) {
  seen[0] = x;
  seen[1] = y;
  return arg;
}

void *one(void *arg) {
  seen[2] = x;
  return arg;
}

int main(void) {
  pthread_t a, b;
  pthread_create(&a, 0, both, 0);
  pthread_create(&b, 0, one, 0);
  x = 1;
  y = 1;
  pthread_join(a, 0);
  pthread_join(b, 0);
  return 0;
}
