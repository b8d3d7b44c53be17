// abort_race: T1 sets x then y; T2 calls abort() when it sees x set but y not yet: an `abort`
// violation under some schedules.
// Traces (hand count): T2 loads x before T1's store (1); after it, T2 loads y before or after
// T1's store of y (2) = 3.
// expect-traces: 3
// expect-bugs: abort
#include <pthread.h>
#include <stdlib.h>

int x, y;

void *t1(void *arg) {
  x = 1;
  y = 1;
  return arg;
}

void *t2(void *arg) {
  if (x == 1 && y == 0)
    abort();
  return arg;
}

int main(void) {
  pthread_t a, b;
  pthread_create(&a, 0, t1, 0);
  pthread_create(&b, 0, t2, 0);
  pthread_join(a, 0);
  pthread_join(b, 0);
  return 0;
}
