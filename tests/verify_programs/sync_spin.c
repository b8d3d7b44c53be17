// A spin lock guards a counter: safe; a thread waiting for it is a thread waiting for a mutex.
// expect-traces: 2
// expect-bugs: none
#include <assert.h>
#include <pthread.h>
pthread_spinlock_t s;
int counter;
void *inc(void *a) {
  pthread_spin_lock(&s);
  counter++;
  pthread_spin_unlock(&s);
  return a;
}
int main(void) {
  pthread_spin_init(&s, 0);
  pthread_t t;
  pthread_create(&t, 0, inc, 0);
  inc(0);
  pthread_join(t, 0);
  assert(counter == 2);
  return 0;
}
