// null_deref: T2 dereferences a pointer T1 publishes, without checking it: when T2 reads the
// pointer before T1 stores it, T2 dereferences NULL and the program crashes (signal 11).
// In EXPLORE a crash halts only the crashing thread (like a failed assertion): the others run
// to the end, so a crash does not cut the other threads short and is independent of them.
// Traces (hand count): T2's load of p before T1's store (T2 crashes) or after it (no crash) = 2.
// expect-traces: 2
// expect-bugs: crash
#include <pthread.h>

int g = 5;
int *p;
int out;

void *publisher(void *arg) {
  p = &g;
  return arg;
}

void *user(void *arg) {
  int *q = p;
  out = *q;
  return arg;
}

int main(void) {
  pthread_t a, b;
  pthread_create(&a, 0, publisher, 0);
  pthread_create(&b, 0, user, 0);
  pthread_join(a, 0);
  pthread_join(b, 0);
  return out == 5 ? 0 : 1;
}
