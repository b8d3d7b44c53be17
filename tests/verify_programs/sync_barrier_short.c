// A barrier for three threads that only two reach: both wait for good (a deadlock).
// expect-traces: 2
// expect-bugs: deadlock
#include <pthread.h>
pthread_barrier_t b;
void *other(void *a) {
  pthread_barrier_wait(&b);
  return a;
}
int main(void) {
  pthread_barrier_init(&b, 0, 3);
  pthread_t t;
  pthread_create(&t, 0, other, 0);
  pthread_barrier_wait(&b);
  pthread_join(t, 0);
  return 0;
}
