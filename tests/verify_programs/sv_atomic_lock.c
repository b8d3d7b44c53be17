// sv_atomic_lock: a lock made of atomic blocks with __VERIFIER_assume, as SV-COMP's tasks write
// them (an acquire whose assumption fails discards the execution); a thread that forgets the
// lock races with the holder's two stores.
// expect-bugs: assert
#include <assert.h>
#include <pthread.h>
extern void __VERIFIER_assume(int);
extern void __VERIFIER_atomic_begin(void);
extern void __VERIFIER_atomic_end(void);

int locked, data;

void __VERIFIER_atomic_acquire(void) {
  __VERIFIER_assume(locked == 0);
  locked = 1;
}

void *holder(void *arg) {
  __VERIFIER_atomic_acquire();
  data = 1;
  data = 2;
  __VERIFIER_atomic_begin();
  locked = 0;
  __VERIFIER_atomic_end();
  return arg;
}

void *intruder(void *arg) {
  int d = data;
  assert(d != 1);
  return arg;
}

int main(void) {
  pthread_t a, b;
  pthread_create(&a, 0, holder, 0);
  pthread_create(&b, 0, intruder, 0);
  pthread_join(a, 0);
  pthread_join(b, 0);
  return 0;
}
