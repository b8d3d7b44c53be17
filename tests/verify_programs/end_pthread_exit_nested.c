// end_pthread_exit_nested: main calls pthread_exit; T1 creates T2 and writes y; T2 reads y and
// fails when it sees the write. The process ends when the last thread ends (no kills).
// expect-bugs: assert
#include <assert.h>
#include <pthread.h>

int y;

void *leaf(void *arg) {
  int v = y;
  assert(v == 0);
  return arg;
}

void *middle(void *arg) {
  pthread_t t;
  pthread_create(&t, 0, leaf, 0);
  y = 1;
  return arg;
}

int main(void) {
  pthread_t t;
  pthread_create(&t, 0, middle, 0);
  pthread_exit(0);
}
