// heap_shared: the shared data is a heap block main allocates and passes to two threads, which
// update its two fields under a global mutex; main checks and frees it. Safe.
// Objects are heap words named by (allocating thread, allocation number, offset).
// Traces (hand count): the 2 orders of the critical sections.
// expect-traces: 2
// expect-bugs: none
#include <assert.h>
#include <pthread.h>
#include <stdlib.h>

struct account {
  int balance;
  int ops;
};

pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;

void *deposit(void *arg) {
  struct account *acc = arg;
  pthread_mutex_lock(&m);
  acc->balance = acc->balance + 10;
  acc->ops = acc->ops + 1;
  pthread_mutex_unlock(&m);
  return 0;
}

int main(void) {
  struct account *acc = malloc(sizeof *acc);
  acc->balance = 0;
  acc->ops = 0;
  pthread_t a, b;
  pthread_create(&a, 0, deposit, acc);
  pthread_create(&b, 0, deposit, acc);
  pthread_join(a, 0);
  pthread_join(b, 0);
  assert(acc->balance == 20 && acc->ops == 2);
  free(acc);
  return 0;
}
