// main creates threads without end, explored under `--max-threads 2`: main's third
// pthread_create ends the process (as `_exit`). Each worker adds 1 to a counter atomically;
// main asserts after each creation that the counter is at most 1, which two workers that both
// ran before main's second check break: a bug within the bound (at `--max-threads 1`, none).
// max-threads: 2
// expect-bugs: assert
#include <pthread.h>
#include <assert.h>
int c;
void *w(void *a) { __atomic_fetch_add(&c, 1, __ATOMIC_SEQ_CST); return a; }
int main(void) {
  pthread_t t;
  for (;;) {
    pthread_create(&t, 0, w, 0);
    assert(__atomic_load_n(&c, __ATOMIC_SEQ_CST) <= 1);
  }
}
