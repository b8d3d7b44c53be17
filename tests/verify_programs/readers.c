// readers: one writer and two readers of x. Under the current dependence reads of one word are
// dependent too (they are ordered in every trace), so the three accesses of x give 3! = 6
// traces. Each reader checks what it saw (a local). Safe.
// expect-traces: 6
// expect-bugs: none
#include <assert.h>
#include <pthread.h>

int x;

void *writer(void *arg) { x = 1; return arg; }
void *reader(void *arg) {
  int seen = x;
  assert(seen == 0 || seen == 1);
  return arg;
}

int main(void) {
  pthread_t p, q, r;
  pthread_create(&p, 0, writer, 0);
  pthread_create(&q, 0, reader, 0);
  pthread_create(&r, 0, reader, 0);
  pthread_join(p, 0);
  pthread_join(q, 0);
  pthread_join(r, 0);
  return 0;
}
