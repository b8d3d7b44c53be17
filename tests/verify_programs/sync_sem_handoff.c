// A pipeline of two stages through a channel of one slot guarded by two semaphores (`slots`,
// initially 1, and `items`, initially 0), passing 2 items: each wait has exactly one post that
// can let it go, so every order of semaphore operations is forced.
// Traces (hand count): the producer's wait(slots)#n needs the consumer's post(slots)#(n-1)
// (or the initial unit); the consumer's wait(items)#n needs post(items)#n. The slot's accesses
// follow the semaphore operations around them. 1 under both relations. (With a wait modelled
// from internal locks, whether each wait arrived before its post and blocked, or after it, made
// 2^3 traces.)
// expect-traces: 1
// expect-bugs: none
#include <assert.h>
#include <pthread.h>
#include <semaphore.h>
sem_t slots, items;
int slot;
void *producer(void *a) {
  for (int i = 1; i <= 2; i++) {
    sem_wait(&slots);
    slot = i;
    sem_post(&items);
  }
  return a;
}
int main(void) {
  sem_init(&slots, 0, 1);
  sem_init(&items, 0, 0);
  pthread_t t;
  pthread_create(&t, 0, producer, 0);
  int sum = 0;
  for (int i = 0; i < 2; i++) {
    sem_wait(&items);
    sum += slot;
    sem_post(&slots);
  }
  assert(sum == 3);
  pthread_join(t, 0);
  return 0;
}
