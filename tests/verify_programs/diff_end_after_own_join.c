// diff_end_after_own_join: a disagreement of the differential campaign with the oracle, kept as a
// regression program (history: benchmarks/results/differential/reproducers/README.md).
// Minimised from the differential campaign (seed 1143 of the long run, and others like it).
// main creates T1 and returns; T1 creates T2, joins it and calls exit(2). The oracle has 5
// traces; irs verify explores 3 in every mode and misses the two in which a thread is killed
// while its next operation is its own end of the process, after T1 has joined T2: schedules
// 0,1,2,1,1,1 (T1 ends the process, kills main, which was about to return) and 0,1,2,1,0,0,0
// (main ends it, kills T1, which was about to exit). Without T2 (no join before the end) irs
// agrees with the oracle.
// expect-traces: 5
// expect-bugs: none
#include <pthread.h>
#include <stdlib.h>
int g0;
void *t2(void *arg) { return 0; }
void *t1(void *arg) {
  pthread_t p2;
  pthread_create(&p2, 0, t2, 0);
  pthread_join(p2, 0);
  exit(2);
}
int main(void) {
  pthread_t p1;
  pthread_create(&p1, 0, t1, 0);
  return 0;
}
