// Status: disagrees at c147440 and b30a00b (described below); agrees at 8b60ab4.
// Minimised (by removing lines) from the differential campaign (seed 1882 of the long run):
// only `--snapshot-gap 1` (a snapshot at every backtracking point) disagrees. It reports
// `deadlock: T0 waits to join T2; T2 waits to join T3, which stopped at a violation` as a bug of
// its own, with the schedule 0,0,1,2,3,3,3,2,0,1,1, which replayed from main ends in T3's
// assertion violation (the run's first failure, as the oracle and every other mode have it; the
// blocked joins after it are no separate bug). So a run continued from a snapshot taken after
// the violation seems to lose it and end as a deadlock. The oracle: 21,675 interleavings, 928
// traces, one bug (the assertion); the traces agree in every mode.
//   IRS_DIFF_SOURCE=benchmarks/results/differential/reproducers/snapshot_gap1_deadlock_after_violation.c \
//     cargo test --release --test differential irs_verify -- --nocapture
#include <assert.h>
#include <pthread.h>

int g0;

void *t3(void *arg) {
  int r1 = 0;
  g0 = g0 + 1;
  r1 = g0;
  assert(r1 != 3);
  return 0;
}

void *t2(void *arg) {
  pthread_t p3;
  pthread_create(&p3, 0, t3, 0);
  g0 = 1;
  pthread_join(p3, 0);
  return 0;
}

void *t1(void *arg) {
  g0 = 2;
  g0 = 1;
  return 0;
}

int main(void) {
  pthread_t p1, p2;
  pthread_create(&p1, 0, t1, 0);
  pthread_create(&p2, 0, t2, 0);
  g0 = 1;
  pthread_join(p2, 0);
  return 0;
}

