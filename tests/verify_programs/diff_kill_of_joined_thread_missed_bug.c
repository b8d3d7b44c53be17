// diff_kill_of_joined_thread_missed_bug: a disagreement of the differential campaign with the oracle, kept as a
// regression program (history: benchmarks/results/differential/reproducers/README.md).
// Minimised from the differential campaign (seed 3302 of the long run): a WRONG `safe` verdict
// in every mode (--k 1, --k 2, --optimal, with and without race-free words and snapshots).
// main creates a thread running t2 (T1) and returns. T1 writes g1, creates T2 (running t3),
// joins it, and asserts g1 != 1, which fails whenever T1 gets that far before main's end: the
// schedule 0,1,1,2,1,1 (irs replay --schedule) reproduces it. The oracle has 6 traces and the
// bug; irs verify explores 4 and says `safe`. main's end kills T1 and T2; T2 has exited and T1
// has joined it, but main does not know that through a join of its own, so it kills T2 as well.
// Without t3 (no join), irs agrees.
// expect-traces: 6
// expect-bugs: assert
#include <assert.h>
#include <pthread.h>
int g1;
void *t3(void *arg) { return 0; }
void *t2(void *arg) {
  pthread_t p3;
  g1 = 1;
  pthread_create(&p3, 0, t3, 0);
  pthread_join(p3, 0);
  assert(g1 != 1);
  return 0;
}
int main(void) {
  pthread_t p2;
  pthread_create(&p2, 0, t2, 0);
  return 0;
}
