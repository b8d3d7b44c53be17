// heap_mutex: the mutex lives in a heap block (initialised with pthread_mutex_init, which is
// not an event) together with the data it protects; two threads increment under it. The
// mutex is named by its logical address (main's first block), whatever address malloc gave it.
// Safe.
// Traces (hand count): the 2 orders of the critical sections.
// expect-traces: 2
// expect-bugs: none
#include <assert.h>
#include <pthread.h>
#include <stdlib.h>

struct box {
  pthread_mutex_t m;
  int value;
};

void *inc(void *arg) {
  struct box *bx = arg;
  pthread_mutex_lock(&bx->m);
  bx->value = bx->value + 1;
  pthread_mutex_unlock(&bx->m);
  return 0;
}

int main(void) {
  struct box *bx = malloc(sizeof *bx);
  pthread_mutex_init(&bx->m, 0);
  bx->value = 0;
  pthread_t a, b;
  pthread_create(&a, 0, inc, bx);
  pthread_create(&b, 0, inc, bx);
  pthread_join(a, 0);
  pthread_join(b, 0);
  assert(bx->value == 2);
  free(bx);
  return 0;
}
