// pthread_once runs its function exactly once, whichever thread comes first; the other waits
// for it to finish. Safe.
// expect-traces: 4
// expect-bugs: none
#include <assert.h>
#include <pthread.h>
pthread_once_t once = PTHREAD_ONCE_INIT;
int runs, ready;
void init(void) { runs++; ready = 1; }
void *user(void *a) {
  pthread_once(&once, init);
  assert(ready == 1);
  return a;
}
int main(void) {
  pthread_t t;
  pthread_create(&t, 0, user, 0);
  user(0);
  pthread_join(t, 0);
  assert(runs == 1);
  return 0;
}
