// diff_cond_gate_missed_trace: a disagreement of the differential campaign with the oracle, kept as a regression
// program (history: benchmarks/results/differential/reproducers/README.md). Fixed: a gate is
// named by the order of the threads' first waits on its condition variable, not by a thread id.
// expect-bugs: none
// The same cause as cond_gate_exit.c, without the process's end: every mode of `irs verify`
// finishes `safe` with 2 traces; the oracle (1754 interleavings) has 3:
// the trace in which the waiter is created before main's second thread, gets runtime id T2 and
// waits (its gate is `c.cond-gate[2]` there, `c.cond-gate[3]` in the trace irs explores) is
// missed by all five modes.
#include <pthread.h>
pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
pthread_cond_t c = PTHREAD_COND_INITIALIZER;
int flag;
void *waiter(void *a) {
  pthread_mutex_lock(&m);
  while (!flag)
    pthread_cond_wait(&c, &m);
  pthread_mutex_unlock(&m);
  return 0;
}
void *other(void *a) { return 0; }
void *parent(void *a) {
  pthread_t w;
  pthread_create(&w, 0, waiter, 0);
  pthread_mutex_lock(&m);
  flag = 1;
  pthread_cond_signal(&c);
  pthread_mutex_unlock(&m);
  pthread_join(w, 0);
  return 0;
}
int main(void) {
  pthread_t p, q;
  pthread_create(&p, 0, parent, 0);
  pthread_create(&q, 0, other, 0);
  pthread_join(p, 0);
  pthread_join(q, 0);
  return 0;
}
