// diff_cond_gate_exit: a disagreement of the differential campaign with the oracle, kept as a regression
// program (history: benchmarks/results/differential/reproducers/README.md). Fixed: a gate is
// named by the order of the threads' first waits on its condition variable, not by a thread id.
// expect-bugs: none
// Minimised from differential seed 60150 (program_gen.rs, seed range 60000..60400).
// A thread (`waiter`) created by `parent` waits on a condition variable while `main` creates
// another thread: which runtime id (T2 or T3) the waiter gets depends on whether `parent`'s
// create or `main`'s second create comes first, two creates irs explores as independent. The
// runtime names the waiter's gate after that id (sync_ops::gate: `c.cond-gate[2]` or
// `c.cond-gate[3]`), so swapping the two creates changes the objects of the waiter's events.
// With the waiter ending the process (_exit), `irs verify` stops with "the program behaved
// differently for the same schedule ... at step 5, T2 did not perform the event an earlier run
// predicted" (exit 2) in --optimal --no-snapshots, --optimal --snapshot-gap 1, --k 2 and
// --optimal --no-race-free-words; --k 1 finishes (6 traces, safe) but misses 2 of the oracle's
// 8 traces. Oracle: 1726 interleavings, 8 traces, no bug.
#include <pthread.h>
#include <unistd.h>
pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
pthread_cond_t c = PTHREAD_COND_INITIALIZER;
int flag;
void *waiter(void *a) {
  pthread_mutex_lock(&m);
  while (!flag)
    pthread_cond_wait(&c, &m);
  pthread_mutex_unlock(&m);
  _exit(0);
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
  return 0;
}
