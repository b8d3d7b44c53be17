// free_unlock: T1 locks a mutex in a heap block, sets the block's `closed` flag and unlocks;
// main frees the block once it sees the flag. The free and T1's unlock are not ordered: a
// schedule that frees first makes T1 unlock a mutex in freed memory (a use after free, which
// the runtime reports as an abort). A free is a write of its block's words and a mutex
// operation a read of the mutex's first word, so the two are dependent.
// Traces (hand count): main's load L of `closed` and T1's store S: L before S reads 0 and
// main frees nothing (1 trace); S before L frees, and the free F and T1's unlock U go either
// way (2 traces, one of them the use after free). T1's lock precedes S, so F; L and T1's lock
// commute. Both relations: 3.
// expect-traces: 3
// expect-traces-reads-commute: 3
// expect-bugs: abort
#include <pthread.h>
#include <stdlib.h>

struct chan {
  pthread_mutex_t m;
  int closed;
};

static void *closer(void *a) {
  struct chan *c = a;
  pthread_mutex_lock(&c->m);
  __atomic_store_n(&c->closed, 1, __ATOMIC_SEQ_CST);
  pthread_mutex_unlock(&c->m);
  return 0;
}

int main(void) {
  struct chan *c = malloc(sizeof *c);
  pthread_mutex_init(&c->m, 0);
  c->closed = 0;
  pthread_t t;
  pthread_create(&t, 0, closer, c);
  if (__atomic_load_n(&c->closed, __ATOMIC_SEQ_CST))
    free(c);
  pthread_join(t, 0);
  return 0;
}
