// A woken waiter's relock of the mutex depends on the signal that woke it, and on nothing that
// later signals to nobody: T1 signals in two critical sections; T2 waits for the first. Four
// orders of the critical sections are feasible (T1a T1b T2, T1a T2 T1b, T2w T1a T1b T2',
// T2w T1a T2' T1b), and only the last, where T2 relocks before T1's second signal (which finds
// nobody waiting), fails the assertion. A relation that orders the relock after the condition
// variable's last signal misses it when its exploration starts with T2 waiting (Nidhugg
// 0aea4d23 on this program, whose objects main initialises: 3 traces, "No errors";
// benchmarks/results/sync_programs/nidhugg_condvar.md).
// expect-traces: 4
// expect-bugs: assert
#include <assert.h>
#include <pthread.h>
pthread_mutex_t m;
pthread_cond_t c;
int flag, y;
void *t1(void *a) {
  pthread_mutex_lock(&m);
  flag = 1;
  pthread_cond_signal(&c);
  pthread_mutex_unlock(&m);
  pthread_mutex_lock(&m);
  y = 1;
  pthread_cond_signal(&c);
  pthread_mutex_unlock(&m);
  return a;
}
void *t2(void *a) {
  int waited = 0;
  pthread_mutex_lock(&m);
  while (!flag) {
    waited = 1;
    pthread_cond_wait(&c, &m);
  }
  int r = y;
  pthread_mutex_unlock(&m);
  assert(!(waited && r == 0));
  return a;
}
int main(void) {
  pthread_t a, b;
  pthread_mutex_init(&m, 0);
  pthread_cond_init(&c, 0);
  pthread_create(&a, 0, t1, 0);
  pthread_create(&b, 0, t2, 0);
  pthread_join(a, 0);
  pthread_join(b, 0);
  return 0;
}
