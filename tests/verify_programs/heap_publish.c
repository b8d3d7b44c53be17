// heap_publish: T1 allocates a block, fills it and publishes its address in a global; T2 reads
// the global and, if it is set, reads the block (a heap object named by T1's allocation).
// Safe under sequential consistency.
// Traces (hand count): T2's load of the pointer before or after T1's store of it = 2.
// expect-traces: 2
// expect-bugs: none
#include <assert.h>
#include <pthread.h>
#include <stdlib.h>

int *shared;

void *publisher(void *arg) {
  int *p = malloc(sizeof *p);
  *p = 7;
  shared = p;
  return arg;
}

void *subscriber(void *arg) {
  int *p = shared;
  if (p != 0)
    assert(*p == 7);
  return arg;
}

int main(void) {
  pthread_t a, b;
  pthread_create(&a, 0, publisher, 0);
  pthread_create(&b, 0, subscriber, 0);
  pthread_join(a, 0);
  pthread_join(b, 0);
  free(shared);
  return 0;
}
