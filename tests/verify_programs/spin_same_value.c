// A thread spins until a flag is set; main only writes the value the flag already has, then
// joins it: the program hangs in every schedule, a livelock (reported as a deadlock). The thread
// reaches its loop's header as soon as it is created, before main's write: what counts is
// whether a word was written after the spinning thread read it, not after its iteration began.
// expect-bugs: deadlock
#include <pthread.h>
volatile int flag;
void *t(void *a) {
  while (!flag)
    ;
  return a;
}
int main(void) {
  pthread_t a;
  pthread_create(&a, 0, t, 0);
  flag = 0;
  pthread_join(a, 0);
  return 0;
}
