// barrier_end_gap: a third thread ends the process (`exit`) while two threads meet at a barrier.
// The run that kills main while it waits to release, and lets t1 release after the kill, must
// give main's *departure* at its final configuration (`cut_at_end`): the operation main was
// killed on became a departure once t1 released. Given as the release it was, it is not enabled
// there and the traces where main departs before its kill (t1 arriving first and releasing,
// e.g. schedule 0,0,1,0,2,0,1,0,2,2) were lost under --equivalence mazurkiewicz (20 of 23).
// Found by the barrier-scenario differential campaign (seed 60084), reduced by hand.
// expect-traces: 23
// expect-traces-reads-commute: 13
// expect-bugs: none
#include <pthread.h>
#include <stdlib.h>
pthread_barrier_t b0;
void *t2(void *arg) { exit(0); }
void *t1(void *arg) {
  pthread_barrier_wait(&b0);
  pthread_exit(0);
}
int main(void) {
  pthread_t p1, p2;
  pthread_barrier_init(&b0, 0, 2);
  pthread_create(&p1, 0, t1, 0);
  pthread_create(&p2, 0, t2, 0);
  pthread_barrier_wait(&b0);
  pthread_join(p1, 0);
  pthread_join(p2, 0);
  pthread_exit(0);
}
