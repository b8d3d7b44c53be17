// diff_failure_after_a_failure: a disagreement of the differential campaign with the oracle
// (seed 11097 of a fresh run at e368d40), minimised; kept as a regression program (history:
// benchmarks/results/differential/reproducers/README.md). T1 publishes a block holding 2, then
// always fails its assertion; main fails its own when it reads the published block. Main's
// failure can only come after T1's (there is no event between T1's publication and its failed
// assertion), so it is never a run's outcome, only one of its later bugs. irs verify reported
// both failures, rightly; the oracle saw only the outcomes and missed main's. The oracle now
// counts every failure of a run.
// expect-traces: 2
// expect-bugs: assert
#include <assert.h>
#include <pthread.h>
#include <stdlib.h>

int g0;
int *pub;

void *t1(void *arg) {
  int *o = calloc(2, sizeof(int));
  o[1] = 2;
  int r1 = g0;
  pub = o;
  assert(r1 != 0);
  return 0;
}

int main(void) {
  pthread_t p1;
  int r2 = 0;
  pthread_create(&p1, 0, t1, 0);
  pthread_detach(p1);
  int *q = pub;
  if (q)
    r2 = q[1];
  assert(r2 != 2);
  pthread_exit(0);
}
