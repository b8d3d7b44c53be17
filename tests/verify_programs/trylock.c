// trylock: T1 only tries the mutex and skips its update when it is taken; T2 locks it. x
// counts the updates; main asserts at least one happened. Safe.
// A failed trylock is an event on the mutex too (`trylock-fail`), ordered with T2's lock and
// unlock.
// Traces (hand count): T1's trylock before T2's lock (succeeds, then T2 waits), between T2's
// lock and unlock (fails), or after T2's unlock (succeeds) = 3.
// expect-traces: 3
// expect-bugs: none
#include <assert.h>
#include <pthread.h>

int x;
pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;

void *polite(void *arg) {
  if (pthread_mutex_trylock(&m) == 0) {
    x = x + 1;
    pthread_mutex_unlock(&m);
  }
  return arg;
}

void *blunt(void *arg) {
  pthread_mutex_lock(&m);
  x = x + 1;
  pthread_mutex_unlock(&m);
  return arg;
}

int main(void) {
  pthread_t a, b;
  pthread_create(&a, 0, polite, 0);
  pthread_create(&b, 0, blunt, 0);
  pthread_join(a, 0);
  pthread_join(b, 0);
  assert(x >= 1);
  return 0;
}
