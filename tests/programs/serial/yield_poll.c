// A thread polls a flag with sched_yield until main sets it (as chan's tests and many pools
// do). A serialised run must let main go first when the poller yields, or it never ends.
#include <pthread.h>
#include <sched.h>
#include <stdio.h>

volatile int flag;
int seen;

static void *poller(void *arg) {
  while (!flag) sched_yield();
  seen = 1;
  return arg;
}

int main(void) {
  pthread_t t;
  pthread_create(&t, 0, poller, 0);
  sched_yield();
  flag = 1;
  pthread_join(t, 0);
  printf("seen=%d\n", seen);
  return 0;
}
