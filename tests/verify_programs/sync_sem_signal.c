// A semaphore initialised to 0 passes a value from a producer to main (sem_wait waits for the
// post); sem_trywait before it may fail or succeed. Safe.
// Traces (hand count): main's trywait T and the producer's post P (the store to `data` before
// P and main's load after the wait follow): T after P takes it (1); T before P fails, and the
// wait then follows P (1). 2.
// expect-traces: 2
// expect-bugs: none
#include <assert.h>
#include <pthread.h>
#include <semaphore.h>
sem_t s;
int data;
void *producer(void *a) {
  data = 42;
  sem_post(&s);
  return a;
}
int main(void) {
  sem_init(&s, 0, 0);
  pthread_t t;
  pthread_create(&t, 0, producer, 0);
  if (sem_trywait(&s) != 0) sem_wait(&s);
  assert(data == 42);
  pthread_join(t, 0);
  return 0;
}
