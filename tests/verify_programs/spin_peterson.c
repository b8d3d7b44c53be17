// Peterson's lock for two threads (one round each) around a lost-update-prone increment: the
// spin-waits end (see spin_message_passing.c), and mutual exclusion holds. Safe.
// expect-bugs: none
#include <assert.h>
#include <pthread.h>
volatile int want[2], turn;
int counter;
void *thr(void *a) {
  int me = (int)(long)a, other = 1 - me;
  want[me] = 1;
  turn = other;
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
