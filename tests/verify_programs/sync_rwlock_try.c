// A reader tries the read lock and a writer the write lock; each does its section only if it got
// in. By hand: the reader first (it gets in), then the writer tries before the reader's release
// (it fails) or after (it gets in): 2; the writer first (it gets in), then the reader tries before
// the writer's release (it fails) or after (it gets in and reads 1): 2. 4 traces under both
// relations (two threads: every pair of their rwlock operations is dependent). Safe.
// expect-traces: 4
// expect-traces-reads-commute: 4
// expect-bugs: none
#include <assert.h>
#include <pthread.h>
pthread_rwlock_t l = PTHREAD_RWLOCK_INITIALIZER;
int x;
void *reader(void *a) {
  if (pthread_rwlock_tryrdlock(&l) == 0) {
    int v = x;
    assert(v == 0 || v == 1);
    pthread_rwlock_unlock(&l);
  }
  return a;
}
int main(void) {
  pthread_t t;
  pthread_create(&t, 0, reader, 0);
  if (pthread_rwlock_trywrlock(&l) == 0) {
    x = 1;
    pthread_rwlock_unlock(&l);
  }
  pthread_join(t, 0);
  return 0;
}
