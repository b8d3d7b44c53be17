// Peterson's lock with the turn given to oneself: both threads can enter, and an increment is
// lost.
// expect-bugs: assert
#include <assert.h>
#include <pthread.h>
volatile int want[2], turn;
int counter;
void *thr(void *a) {
  int me = (int)(long)a, other = 1 - me;
  want[me] = 1;
  turn = me;
  while (want[other] && turn == other)
    ;
  int v = counter;
  counter = v + 1;
  want[me] = 0;
  return 0;
}
int main(void) {
  pthread_t t;
  pthread_create(&t, 0, thr, (void *)1);
  thr((void *)0);
  pthread_join(t, 0);
  assert(counter == 2);
  return 0;
}
