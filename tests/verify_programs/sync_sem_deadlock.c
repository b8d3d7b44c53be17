// The producer posts only when it sees the flag main has not set yet: in the schedules where
// main sets it first, main waits on the semaphore for good.
// Traces (hand count; a wait is one event, enabled only while the count is above 0): the
// producer's read R of `cancelled` and main's write W: R first, the producer posts and main's
// wait takes it (the post must come first); W first, nothing is posted and main waits for good
// (the deadlock). 2.
// expect-traces: 2
// expect-bugs: deadlock
#include <pthread.h>
#include <semaphore.h>
sem_t s;
int cancelled;
void *producer(void *a) {
  if (!cancelled) sem_post(&s);
  return a;
}
int main(void) {
  sem_init(&s, 0, 0);
  pthread_t t;
  pthread_create(&t, 0, producer, 0);
  cancelled = 1;
  sem_wait(&s);
  pthread_join(t, 0);
  return 0;
}
