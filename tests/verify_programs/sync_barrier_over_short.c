// Three threads at a barrier of 2: the first two to arrive leave, the third waits for a
// partner that never comes (a deadlock whichever thread is left). The third arrival waits for
// the first generation's release before it arrives at all (POSIX: it belongs to the next one).
// By hand (the barrier is ordered): 3! orders of the arrivals, which of the first two releases
// (2), and the third arrival before or after the other's departure (2): 24 traces.
// expect-traces: 24
// expect-traces-reads-commute: 24
// expect-bugs: deadlock
#include <pthread.h>
pthread_barrier_t b;
void *worker(void *a) {
  pthread_barrier_wait(&b);
  return a;
}
int main(void) {
  pthread_barrier_init(&b, 0, 2);
  pthread_t t1, t2;
  pthread_create(&t1, 0, worker, 0);
  pthread_create(&t2, 0, worker, 0);
  pthread_barrier_wait(&b);
  pthread_join(t1, 0);
  pthread_join(t2, 0);
  return 0;
}
