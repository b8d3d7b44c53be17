// A thread unlocks an rwlock it does not hold, while another may hold it for reading: undefined
// in POSIX (glibc takes it for a reader's release and corrupts the lock), so a violation in
// every execution that reaches it (abort). By hand: whether main holds the lock depends on main
// alone, so its unlock is no event: the violation is reported at the call, and the only event
// before it is main's create, after which main runs on to the call (no event between, so no
// point where another thread could be chosen): 1 trace under either relation.
// expect-traces: 1
// expect-traces-reads-commute: 1
// expect-bugs: abort
#include <pthread.h>
pthread_rwlock_t l = PTHREAD_RWLOCK_INITIALIZER;
void *reader(void *a) {
  pthread_rwlock_rdlock(&l);
  pthread_rwlock_unlock(&l);
  return a;
}
int main(void) {
  pthread_t t;
  pthread_create(&t, 0, reader, 0);
  pthread_rwlock_unlock(&l);
  pthread_join(t, 0);
  return 0;
}
