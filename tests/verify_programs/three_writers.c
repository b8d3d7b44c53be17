// three_writers: three threads write different constants to x; main asserts that the last
// write was not T3's. Fails under the schedules where T3 writes last.
// Traces (hand count): the 3! orders of the three stores = 6 (2 of them fail).
// expect-traces: 6
// expect-bugs: assert
#include <assert.h>
#include <pthread.h>

int x;

void *w1(void *arg) { x = 1; return arg; }
void *w2(void *arg) { x = 2; return arg; }
void *w3(void *arg) { x = 3; return arg; }

int main(void) {
  pthread_t a, b, c;
  pthread_create(&a, 0, w1, 0);
  pthread_create(&b, 0, w2, 0);
  pthread_create(&c, 0, w3, 0);
  pthread_join(a, 0);
  pthread_join(b, 0);
  pthread_join(c, 0);
  assert(x != 3);
  return 0;
}
