// Two readers take and release the read lock: main's second child C, and B, the first child of
// main's first child A. Their reader slots (a function of the creation path, RWLOCK_SLOTS = 4)
// are both 2, so their acquisitions are ordered, an over-approximation of the dependence: each
// reader's two sections on the slot's lock (acquire, release) interleave with the other's as
// whole sections, C(4,2) = 6 traces. Safe.
// expect-traces: 6
// expect-bugs: none
#include <pthread.h>
pthread_rwlock_t l = PTHREAD_RWLOCK_INITIALIZER;
void *reader(void *p) {
  pthread_rwlock_rdlock(&l);
  pthread_rwlock_unlock(&l);
  return p;
}
void *parent(void *p) {
  pthread_t b;
  pthread_create(&b, 0, reader, 0);
  pthread_join(b, 0);
  return p;
}
int main(void) {
  pthread_t a, c;
  pthread_create(&a, 0, parent, 0);
  pthread_create(&c, 0, reader, 0);
  pthread_join(a, 0);
  pthread_join(c, 0);
  return 0;
}
