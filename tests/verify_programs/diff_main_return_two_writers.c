// diff_main_return_two_writers: a disagreement of the differential campaign with the oracle, kept as a
// regression program (history: benchmarks/results/differential/reproducers/README.md).
// Minimised from the differential campaign (seed 142 of an earlier slice, and many like it).
// Two threads write the same word; main returns without joining them, so its end kills both
// wherever they are. The oracle has 13 traces. irs verify --k 1 explores all 13; --k 2 and
// --optimal (with or without race-free words, with or without snapshots) explore 9 and miss the
// 4 in which both threads have written (in either order) and are then killed before their
// exits: e.g. the schedule 0,0,2,0,1,0,0 (T2 writes, main ends, T1 writes, main kills both).
// With the two threads writing different words, irs agrees with the oracle (9 traces).
// expect-traces: 13
// expect-bugs: none
#include <pthread.h>

int g0;

void *t2(void *arg) {
  g0 = 2;
  return 0;
}

void *t1(void *arg) {
  g0 = 3;
  return 0;
}

int main(void) {
  pthread_t p1, p2;
  pthread_create(&p1, 0, t1, 0);
  pthread_create(&p2, 0, t2, 0);
  return 0;
}
