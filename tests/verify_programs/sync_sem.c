// A semaphore initialised to 1 guards a counter two threads increment: safe.
// expect-bugs: none
#include <assert.h>
#include <pthread.h>
#include <semaphore.h>
sem_t s;
int counter;
void *inc(void *a) {
  sem_wait(&s);
  counter++;
  sem_post(&s);
  return a;
}
int main(void) {
  sem_init(&s, 0, 1);
  pthread_t t;
  pthread_create(&t, 0, inc, 0);
  inc(0);
  pthread_join(t, 0);
  assert(counter == 2);
  return 0;
}
