// sv_assume: a failed __VERIFIER_assume discards the execution (not a bug), but what other
// threads do before it is still explored: T1's assertion fails when it runs before main's
// assumption, which fails in every execution.
// expect-bugs: assert
#include <assert.h>
#include <pthread.h>
extern void __VERIFIER_assume(int);

int x;

void *check(void *arg) {
  int v = x;
  assert(v == 1);
  return arg;
}

int main(void) {
  pthread_t t;
  pthread_create(&t, 0, check, 0);
  __VERIFIER_assume(x == 1);
  pthread_join(t, 0);
  return 0;
}
