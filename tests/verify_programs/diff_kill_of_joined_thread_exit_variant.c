// diff_kill_of_joined_thread_exit_variant: a disagreement of the differential campaign with the oracle, kept as a
// regression program (history: benchmarks/results/differential/reproducers/README.md).
// Minimised from the differential campaign: a WRONG `safe` verdict in every mode (the same
// pattern as kill_of_joined_thread_missed_bug.c, with the end being a thread's exit).
// T1 writes g1 and exits the process; T2 just returns; main joins T2, then reads g1 and asserts
// it is 0, then joins T1 (never completes: T1's exit kills main). The schedule
// 0,1,0,2,0,0,1,1,1 (irs replay --schedule) fails the assertion: T1 writes, main joins T2,
// reads 1, fails; then T1 ends the process and kills main and T2 (T2 has exited already, but
// T1 does not know it through a join of its own, so it kills it). The oracle has 6 traces and
// the bug; irs verify explores 3 in every mode (--k 1, --k 2, --optimal, with and without
// race-free words and snapshots) and says `safe`. Without T2 (no join of an exited thread that
// the ender then kills) irs agrees with the oracle.
// expect-traces: 6
// expect-bugs: assert
#include <assert.h>
#include <pthread.h>
#include <stdlib.h>

int g1;

void *t2(void *arg) { return 0; }

void *t1(void *arg) {
  g1 = 1;
  exit(4);
}

int main(void) {
  pthread_t p1, p2;
  pthread_create(&p1, 0, t1, 0);
  pthread_create(&p2, 0, t2, 0);
  pthread_join(p2, 0);
  int r = g1;
  assert(r == 0);
  pthread_join(p1, 0);
  return 0;
}
