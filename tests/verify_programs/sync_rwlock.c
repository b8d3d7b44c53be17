// A writer updates two words under the write lock; a reader checks under the read lock that it
// never sees one without the other. Safe.
// expect-bugs: none
#include <assert.h>
#include <pthread.h>
pthread_rwlock_t l = PTHREAD_RWLOCK_INITIALIZER;
int a, b;
void *writer(void *p) {
  pthread_rwlock_wrlock(&l);
  a = 1;
  b = 1;
  pthread_rwlock_unlock(&l);
  return p;
}
int main(void) {
  pthread_t t;
  pthread_create(&t, 0, writer, 0);
  pthread_rwlock_rdlock(&l);
  assert(a == b);
  pthread_rwlock_unlock(&l);
  pthread_join(t, 0);
  return 0;
}
