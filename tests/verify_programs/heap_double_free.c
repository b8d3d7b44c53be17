// heap_double_free: two threads each free a shared block unless the other has claimed it, with
// a plain flag: both can read it unset and both free the block. EXPLORE keeps freed blocks, so
// the second free is reported as a double free (glibc usually aborts on it).
// Traces (hand count): each thread loads `claimed` (L), and if it was 0 stores it (S), loads
// `block` (B) and frees (F). T1 claims first, T2 sees it (L1 S1 L2): 1; the converse: 1; both
// load 0 before either stores: the two L's order (2, Mazurkiewicz only) x the two S's (2) x
// the two B's (2, Mazurkiewicz only) x the two F's (2, the second a double free) = 16 (4 with
// reads commuting). In all: 18; 6.
// expect-traces: 18
// expect-traces-reads-commute: 6
// expect-bugs: abort
#include <pthread.h>
#include <stdlib.h>

static int claimed;
static char *block;

static void *owner(void *a) {
  if (!claimed) {
    claimed = 1;
    free(block);
  }
  return a;
}

int main(void) {
  block = malloc(32);
  pthread_t t1, t2;
  pthread_create(&t1, 0, owner, 0);
  pthread_create(&t2, 0, owner, 0);
  pthread_join(t1, 0);
  pthread_join(t2, 0);
  return 0;
}
