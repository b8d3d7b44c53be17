// More threads than the count use a barrier (an off-by-one in the count, as in
// benchmarks/sync_programs/stencil.c -DBUG): a barrier of 1 at which two threads wait, so each
// is a generation of its own and the barrier orders nothing. POSIX puts an arrival once a
// generation is complete into the next one (in the C library the last arrival releases at
// once); irs's model disables the arrival until the release, and orders the barrier's
// arrivals once more threads than its count use it. main may pass before the writer writes.
// By hand: the generations are main's then the writer's (the write before the writer's arrival,
// so before main's read: 1 trace) or the writer's then main's (the write before or after main's
// read: 2): 3 traces, under both relations (an ordered barrier has no commuting operations).
// expect-traces: 3
// expect-traces-reads-commute: 3
// expect-bugs: assert
#include <assert.h>
#include <pthread.h>
pthread_barrier_t b;
int w;
void *writer(void *a) {
  w = 1;
  pthread_barrier_wait(&b);
  return a;
}
int main(void) {
  pthread_barrier_init(&b, 0, 1);
  pthread_t t;
  pthread_create(&t, 0, writer, 0);
  pthread_barrier_wait(&b);
  int seen = w;
  pthread_join(t, 0);
  assert(seen == 1);
  return 0;
}
