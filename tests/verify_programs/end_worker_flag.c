// end_worker_flag: a worker checks a flag that main sets just before returning; it fails when
// it sees the flag set, which needs main's store before the worker's load and the end after.
// expect-bugs: assert
#include <assert.h>
#include <pthread.h>

int done;

void *worker(void *arg) {
  if (done)
    assert(0);
  return arg;
}

int main(void) {
  pthread_t t;
  pthread_create(&t, 0, worker, 0);
  done = 1;
  return 0;
}
