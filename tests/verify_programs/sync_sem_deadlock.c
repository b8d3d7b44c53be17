// The producer posts only when it sees the flag main has not set yet: in the schedules where
// main sets it first, main waits on the semaphore for good.
// expect-traces: 3
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
