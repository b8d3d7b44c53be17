// diff_sem_gate_exit: a disagreement of the differential campaign with the oracle, kept as a regression
// program (history: benchmarks/results/differential/reproducers/README.md). Fixed: a gate is
// named by the order of the threads' first waits on its condition variable, not by a thread id.
// expect-bugs: none
// The same cause with a semaphore: sem_wait's internal gate is named after the waiter's runtime
// id. `irs verify` stops with "the program behaved differently for the same schedule" in
// --optimal --no-snapshots, --optimal --snapshot-gap 1, --k 2 and --optimal
// --no-race-free-words; --k 1 finishes (6 traces, safe) and misses 2 of the oracle's 8 traces.
#include <pthread.h>
#include <semaphore.h>
#include <unistd.h>
sem_t s;
void *waiter(void *a) {
  sem_wait(&s);
  _exit(0);
}
void *other(void *a) { return 0; }
void *parent(void *a) {
  pthread_t w;
  pthread_create(&w, 0, waiter, 0);
  sem_post(&s);
  pthread_join(w, 0);
  return 0;
}
int main(void) {
  pthread_t p, q;
  sem_init(&s, 0, 0);
  pthread_create(&p, 0, parent, 0);
  pthread_create(&q, 0, other, 0);
  pthread_join(p, 0);
  return 0;
}
