// Two threads, explored under `--max-threads 4`: no thread creates more than 4, so no
// execution is cut and the verdict is plain `safe` (the bound restricted nothing). By hand:
// the workers' stores to one word and main's two creates and joins: the two stores' orders, 2
// traces (Mazurkiewicz too: the stores are the only accesses).
// max-threads: 4
// expect-traces: 2
// expect-traces-reads-commute: 2
// expect-bugs: none
#include <pthread.h>
int x;
void *w(void *a) { x = (int)(long)a; return a; }
int main(void) {
  pthread_t a, b;
  pthread_create(&a, 0, w, (void *)1);
  pthread_create(&b, 0, w, (void *)2);
  pthread_join(a, 0);
  pthread_join(b, 0);
  return 0;
}
