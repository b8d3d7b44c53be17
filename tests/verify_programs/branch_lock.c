// branch_lock: T2 reads a flag T1 sets; only when it sees it does T2 take the mutex and update
// the counter (else it updates another variable without a lock). T1 updates the counter under
// the mutex after setting the flag. Safe: the counter is always updated under the mutex.
// Traces (hand count): T2's load of the flag before T1's store (then T2 touches only `other`:
// 1), or after it (T2's critical section before or after T1's: 2) = 3.
// expect-traces: 3
// expect-bugs: none
#include <assert.h>
#include <pthread.h>

int flag, counter, other;
pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;

void *t1(void *arg) {
  flag = 1;
  pthread_mutex_lock(&m);
  counter = counter + 1;
  pthread_mutex_unlock(&m);
  return arg;
}

void *t2(void *arg) {
  if (flag) {
    pthread_mutex_lock(&m);
    counter = counter + 1;
    pthread_mutex_unlock(&m);
  } else {
    other = 1;
  }
  return arg;
}

int main(void) {
  pthread_t p, q;
  pthread_create(&p, 0, t1, 0);
  pthread_create(&q, 0, t2, 0);
  pthread_join(p, 0);
  pthread_join(q, 0);
  assert(counter + other == 2);
  return 0;
}
