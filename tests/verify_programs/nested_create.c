// nested_create: threads that create threads. main creates A and B; A creates C and B creates
// D, so the runtime ids of C and D (T3, T4) depend on which of A and B creates first. C and D
// each write x; main reads x at the end. Safe.
// Traces (hand count): the order of C's and D's stores = 2 (the creation order of C and D is
// not a dependence: they are different threads' objects).
// expect-traces: 2
// expect-bugs: none
#include <assert.h>
#include <pthread.h>

int x;

void *leaf(void *arg) {
  x = (int)(long)arg;
  return 0;
}

void *middle(void *arg) {
  pthread_t t;
  pthread_create(&t, 0, leaf, arg);
  pthread_join(t, 0);
  return 0;
}

int main(void) {
  pthread_t a, b;
  pthread_create(&a, 0, middle, (void *)1L);
  pthread_create(&b, 0, middle, (void *)2L);
  pthread_join(a, 0);
  pthread_join(b, 0);
  assert(x == 1 || x == 2);
  return 0;
}
