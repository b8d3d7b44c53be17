// end_join_victim: main returns while T2 joins T1: the end kills T1 and T2 wherever they stand,
// T2's join included (a killed thread is never joined). T2 checks what T1 wrote, which the join
// orders. Safe.
// expect-bugs: none
#include <assert.h>
#include <pthread.h>

int x;
pthread_t t1;

void *first(void *arg) {
  x = 1;
  return arg;
}

void *second(void *arg) {
  pthread_join(t1, 0);
  assert(x == 1);
  return arg;
}

int main(void) {
  pthread_t t2;
  pthread_create(&t1, 0, first, 0);
  pthread_create(&t2, 0, second, 0);
  return 0;
}
