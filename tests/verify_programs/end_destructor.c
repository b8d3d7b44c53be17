// end_destructor: a static destructor runs at the process's end on the thread that ends it,
// while a thread main did not join may still run: it fails when that thread has set the flag.
// expect-bugs: assert
#include <assert.h>
#include <pthread.h>

int flag;

__attribute__((destructor)) static void last_check(void) {
  assert(flag == 0);
}

void *setter(void *arg) {
  flag = 1;
  return arg;
}

int main(void) {
  pthread_t t;
  pthread_create(&t, 0, setter, 0);
  return 0;
}
