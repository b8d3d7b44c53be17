// end_exit_thread: T1 writes x and calls exit(0) while T2 can still read what it wrote; T2
// fails when it sees the write. main joins both (the joins never complete once T1 ends the
// process). The end kills main and T2 wherever they stand.
// expect-bugs: assert
#include <assert.h>
#include <pthread.h>
#include <stdlib.h>

int x;

void *writer(void *arg) {
  x = 1;
  exit(0);
}

void *reader(void *arg) {
  int v = x;
  assert(v == 0);
  return arg;
}

int main(void) {
  pthread_t a, b;
  pthread_create(&a, 0, writer, 0);
  pthread_create(&b, 0, reader, 0);
  pthread_join(a, 0);
  pthread_join(b, 0);
  return 0;
}
