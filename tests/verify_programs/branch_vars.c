// branch_vars: T2 reads x and branches, so what it does NEXT depends on the schedule: it writes
// y when it saw T1's write, z otherwise. Main then reads y and z. Safe.
// Traces (hand count): T2's load of x before or after T1's store = 2.
// expect-traces: 2
// expect-bugs: none
#include <assert.h>
#include <pthread.h>

int x, y, z;

void *writer(void *arg) {
  x = 1;
  return arg;
}

void *reader(void *arg) {
  int r = x;
  if (r == 1)
    y = 1;
  else
    z = 1;
  return arg;
}

int main(void) {
  pthread_t p, q;
  pthread_create(&p, 0, writer, 0);
  pthread_create(&q, 0, reader, 0);
  pthread_join(p, 0);
  pthread_join(q, 0);
  assert(y + z == 1);
  return 0;
}
