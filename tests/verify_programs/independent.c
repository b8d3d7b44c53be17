// independent: three threads, each writing only its own global. No two events of different
// threads share an object (besides thread creation and joins), so there is exactly one trace
// however many interleavings there are. Safe.
// expect-traces: 1
// expect-bugs: none
#include <assert.h>
#include <pthread.h>

int a, b, c;

void *ta(void *arg) { a = 1; return arg; }
void *tb(void *arg) { b = 2; return arg; }
void *tc(void *arg) { c = 3; return arg; }

int main(void) {
  pthread_t p, q, r;
  pthread_create(&p, 0, ta, 0);
  pthread_create(&q, 0, tb, 0);
  pthread_create(&r, 0, tc, 0);
  pthread_join(p, 0);
  pthread_join(q, 0);
  pthread_join(r, 0);
  assert(a + b + c == 6);
  return 0;
}
