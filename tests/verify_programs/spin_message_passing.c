// A receiver spins on a flag the sender sets after writing the data (a loop that only reads:
// the runtime ends the executions where an iteration repeats the one before, discarded, and
// explores those where the sender writes first). Safe.
// expect-bugs: none
#include <assert.h>
#include <pthread.h>
int data;
volatile int flag;
void *sender(void *a) {
  data = 42;
  flag = 1;
  return a;
}
int main(void) {
  pthread_t t;
  pthread_create(&t, 0, sender, 0);
  while (!flag)
    ;
  assert(data == 42);
  pthread_join(t, 0);
  return 0;
}
