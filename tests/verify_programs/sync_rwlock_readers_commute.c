// Two readers take and release the read lock of one rwlock: a reader's operations are on its
// thread's copy of the rwlock, so nothing orders the two readers: every interleaving is one
// trace. (Under --equivalence mazurkiewicz every operation on the rwlock is ordered: the two
// sections of each reader, 4 in all, interleave in C(4,2) = 6 traces.) Safe.
// expect-traces: 6
// expect-traces-reads-commute: 1
// expect-bugs: none
#include <pthread.h>
pthread_rwlock_t l = PTHREAD_RWLOCK_INITIALIZER;
void *reader(void *p) {
  pthread_rwlock_rdlock(&l);
  pthread_rwlock_unlock(&l);
  return p;
}
int main(void) {
  pthread_t t[2];
  for (int i = 0; i < 2; i++) pthread_create(&t[i], 0, reader, 0);
  for (int i = 0; i < 2; i++) pthread_join(t[i], 0);
  return 0;
}
