// message_passing_bug: the producer sets the flag BEFORE writing the data; a consumer that sees
// the flag may read stale data: T2's assertion fails under some schedules.
// Traces (hand count): flag read before T1's flag write (1), or after it with the data read
// before (the bug) or after T1's data write (2) = 3.
// expect-traces: 3
// expect-bugs: assert
#include <assert.h>
#include <pthread.h>

int data, flag;

void *producer(void *arg) {
  flag = 1;
  data = 42;
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
