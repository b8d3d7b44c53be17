// main creates threads without end (SV-COMP's `while (1) pthread_create`), explored under
// `--max-threads 2`: main's third pthread_create ends the process there (as `_exit`). Each
// worker increments a counter without a lock; main asserts after each creation that the
// counter is below 3, which two workers can never break: no bug within the bound.
// By hand: main creates T1, loads c, creates T2, loads c, then ends at its third create (an
// `End`, then the kills of T1 and T2 where they are). Events: main's 2 creates, 2 loads and its
// end; each worker's load, store and exit (3 each), cut by its kill anywhere.
// max-threads: 2
// expect-bugs: none
#include <pthread.h>
#include <assert.h>
int c;
void *w(void *a) { int t = c; c = t + 1; return a; }
int main(void) {
  pthread_t t;
  while (1) {
    pthread_create(&t, 0, w, 0);
    assert(c < 3);
  }
}
