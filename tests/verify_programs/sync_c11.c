// C11 threads (<threads.h>): two threads created with thrd_create add to a counter under an
// mtx_t, signal a cnd_t main waits on, run an init function through call_once, and return
// values thrd_join reads back. Safe.
// expect-bugs: none
#include <assert.h>
#include <threads.h>
mtx_t m;
cnd_t c;
once_flag once = ONCE_FLAG_INIT;
int counter, ready, inits;
void init(void) { inits++; }
int worker(void *arg) {
  call_once(&once, init);
  mtx_lock(&m);
  counter += (int)(long)arg;
  ready++;
  cnd_signal(&c);
  mtx_unlock(&m);
  return (int)(long)arg * 10;
}
int main(void) {
  mtx_init(&m, mtx_plain);
  cnd_init(&c);
  thrd_t a;
  thrd_create(&a, worker, (void *)1);
  mtx_lock(&m);
  while (ready < 1) cnd_wait(&c, &m);
  mtx_unlock(&m);
  int ra;
  thrd_join(a, &ra);
  assert(counter == 1 && ra == 10 && inits == 1);
  return 0;
}
