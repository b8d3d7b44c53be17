// A thread that holds the read lock asks for the write lock: the write acquisition waits for
// every reader to leave, itself included (as glibc's does), so the program deadlocks whatever
// another reader does. By hand: the events are main's read acquisition and the other reader's
// acquisition and release (main's write request never becomes an event); readers' operations
// commute, so 1 trace; under Mazurkiewicz main's acquisition comes before, between or after the
// other's two: 3.
// expect-traces: 3
// expect-traces-reads-commute: 1
// expect-bugs: deadlock
#include <pthread.h>
pthread_rwlock_t l = PTHREAD_RWLOCK_INITIALIZER;
void *other(void *a) {
  pthread_rwlock_rdlock(&l);
  pthread_rwlock_unlock(&l);
  return a;
}
int main(void) {
  pthread_t t;
  pthread_create(&t, 0, other, 0);
  pthread_rwlock_rdlock(&l);
  pthread_rwlock_wrlock(&l);
  pthread_rwlock_unlock(&l);
  pthread_join(t, 0);
  return 0;
}
