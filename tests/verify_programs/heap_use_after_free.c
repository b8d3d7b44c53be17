// heap_use_after_free: main hands a heap block to T1 and frees it without waiting for T1 to be
// done with it. T1's read of the block either comes before the free (fine) or after it: a use
// after free, which EXPLORE reports as a violation (the execution keeps freed blocks from the
// C library, so nothing else can lie there; docs/src/exploration.md, "Freed memory").
// Traces (hand count): T1's read R and main's free F (a write of the block's words) in either
// order = 2, in both relations; the second is the bug.
// expect-traces: 2
// expect-traces-reads-commute: 2
// expect-bugs: abort
#include <pthread.h>
#include <stdlib.h>

struct item {
  int id, value;
};

static int seen;

static void *worker(void *a) {
  struct item *it = a;
  seen = it->value;
  return 0;
}

int main(void) {
  struct item *it = malloc(sizeof *it);
  it->id = 1;
  it->value = 7;
  pthread_t t;
  pthread_create(&t, 0, worker, it);
  free(it);
  pthread_join(t, 0);
  return seen == 7 ? 0 : 1;
}
