// free_signal: as free_unlock.c, with a condition variable in the block too: T1 signals it
// (nobody waits) between setting `closed` and unlocking. A free that comes before the signal
// leaves the signal's operations on a condition variable in freed memory: they must be named
// by the block as before the free (else the same schedule names them otherwise in another run,
// and the exploration stops with "behaved differently"), and the unlock after it is the use
// after free.
// Traces (hand count): main's load L of `closed` and T1's store S: L before S, no free (1);
// S before L: the free F and T1's unlock U either way (2). The signal's internal lock events
// are on internal objects, which no free writes: F commutes with them. Both relations: 3.
// expect-traces: 3
// expect-traces-reads-commute: 3
// expect-bugs: abort
#include <pthread.h>
#include <stdlib.h>

struct chan {
  pthread_mutex_t m;
  pthread_cond_t cv;
  int closed;
};

static void *closer(void *a) {
  struct chan *c = a;
  pthread_mutex_lock(&c->m);
  __atomic_store_n(&c->closed, 1, __ATOMIC_SEQ_CST);
  pthread_cond_signal(&c->cv);
  pthread_mutex_unlock(&c->m);
  return 0;
}

int main(void) {
  struct chan *c = malloc(sizeof *c);
  pthread_mutex_init(&c->m, 0);
  pthread_cond_init(&c->cv, 0);
  c->closed = 0;
  pthread_t t;
  pthread_create(&t, 0, closer, c);
  if (__atomic_load_n(&c->closed, __ATOMIC_SEQ_CST))
    free(c);
  pthread_join(t, 0);
  return 0;
}
