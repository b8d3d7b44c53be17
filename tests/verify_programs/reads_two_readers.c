// reads_two_readers: T1 and T2 each read x once; main writes x once. Under reads-commute the
// two reads are independent: a trace is which reads come before the write, 2 x 2 = 4. Under
// Mazurkiewicz the three accesses to x are totally ordered: 3! = 6. Safe.
// expect-traces: 6
// expect-traces-reads-commute: 4
// expect-bugs: none
#include <pthread.h>

int x;
int seen[2];

void *reader(void *arg) {
  int i = (int)(long)arg;
  seen[i] = x;
  return arg;
}

int main(void) {
  pthread_t a, b;
  pthread_create(&a, 0, reader, (void *)0);
  pthread_create(&b, 0, reader, (void *)1);
  x = 1;
  pthread_join(a, 0);
  pthread_join(b, 0);
  return 0;
}
