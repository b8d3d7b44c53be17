// diff_nondeterminism_after_nested_join: a disagreement of the differential campaign with the oracle, kept as a
// regression program (history: benchmarks/results/differential/reproducers/README.md).
// Minimised (by removing lines) from the differential campaign at b30a00b (seed 3740 of the long
// run): `irs verify` stops in every mode with exit 2 and "the program behaved differently for the
// same schedule (nondeterminism irs cannot control, ...): a schedule that an earlier run made
// possible was infeasible at step 6 (infeasible schedule: at step 6 T0 is not enabled (enabled:
// T1 T2))" (at step 11 in the original program). The program is deterministic: the oracle runs
// all 64 of its interleavings through the executor (8 traces, no bug). T1 ends the process with
// exit(2) while main joins T2, which creates and joins T3. (At c147440, seed 3740 got missed
// traces instead.) The cause: cex moved main's blocked join of T2 (main was killed waiting for
// it) up T2's chain past the kill of T2 as if T2 had ended there, taking T2's own join of T3 for
// a join of T2; the join of a thread moves past a kill only onto its exit or another thread's
// join of it.
// expect-traces: 8
// expect-bugs: none
#include <pthread.h>
#include <stdlib.h>

void *t3(void *arg) { return 0; }

void *t2(void *arg) {
  pthread_t p3;
  pthread_create(&p3, 0, t3, 0);
  pthread_join(p3, 0);
  return 0;
}

void *t1(void *arg) { exit(2); }

int main(void) {
  pthread_t p1, p2;
  pthread_create(&p1, 0, t1, 0);
  pthread_create(&p2, 0, t2, 0);
  pthread_join(p2, 0);
  return 0;
}
