// Two readers take and release the read lock: main's second child C, and B, the first child of
// main's first child A (threads at different depths of the creation tree, which the reader
// slots of an earlier model put in one slot and ordered). A reader's operations are on its own
// thread's copy of the rwlock: 1 trace (under --equivalence mazurkiewicz, which orders them,
// C(4,2) = 6). Safe.
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
