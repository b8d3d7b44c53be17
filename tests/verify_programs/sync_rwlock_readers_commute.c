// Two readers take and release the read lock of one rwlock: main's first two children, whose
// read acquisitions touch only their own reader slots (1 and 2), so nothing orders them: every
// interleaving is one trace. (With one internal lock for every reader, the two sections of each
// reader, 4 in all, would interleave in C(4,2) = 6 traces.) Safe.
// expect-traces: 1
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
