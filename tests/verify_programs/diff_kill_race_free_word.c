// diff_kill_race_free_word: a disagreement of the differential campaign with the oracle, kept as a
// regression program (history: benchmarks/results/differential/reproducers/README.md).
// Minimised from the differential campaign (seed 0 of the test's slice, and many like it).
// main reads g0, a word no other thread touches (race-free), then exits; T1 exits too. The
// oracle has 3 traces: T1 ends the process (a) after main's load, (b) before it, main being
// killed with the load still pending, or (c) main ends it. With race-free words (the default),
// irs verify explores 2 in every mode and misses (b); --no-race-free-words explores all 3.
// expect-traces: 3
// expect-bugs: none
#include <pthread.h>
#include <stdlib.h>

int g0;

void *t1(void *arg) { exit(5); }

int main(void) {
  pthread_t p1;
  pthread_create(&p1, 0, t1, 0);
  int r = g0;
  exit(0);
}
