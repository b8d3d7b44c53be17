// Two "writers" that take the read lock: both can be in at once, and an update is lost.
// expect-bugs: assert
#include <assert.h>
#include <pthread.h>
pthread_rwlock_t l = PTHREAD_RWLOCK_INITIALIZER;
int counter;
void *inc(void *p) {
  pthread_rwlock_rdlock(&l);
  int v = counter;
  counter = v + 1;
  pthread_rwlock_unlock(&l);
  return p;
}
int main(void) {
  pthread_t t;
  pthread_create(&t, 0, inc, 0);
  inc(0);
  pthread_join(t, 0);
  assert(counter == 2);
  return 0;
}
