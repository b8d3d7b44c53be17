// message_passing: T1 writes data, then sets a flag; T2 reads the flag and, if set, checks the
// data. Sequential consistency makes it safe.
// Traces (hand count): T2 reads the flag before T1 sets it (T2 reads nothing else), or after
// it (then its read of data follows T1's write of data) = 2.
// expect-traces: 2
// expect-bugs: none
#include <assert.h>
#include <pthread.h>

int data, flag;

void *producer(void *arg) {
  data = 42;
  flag = 1;
  return arg;
}

void *consumer(void *arg) {
  if (flag == 1)
    assert(data == 42);
  return arg;
}

int main(void) {
  pthread_t p, q;
  pthread_create(&p, 0, producer, 0);
  pthread_create(&q, 0, consumer, 0);
  pthread_join(p, 0);
  pthread_join(q, 0);
  return 0;
}
