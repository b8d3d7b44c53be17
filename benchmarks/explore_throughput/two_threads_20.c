/* Executor throughput: 2 threads, 20 visible accesses in all (plus create/join/exit). */
#include <pthread.h>
int a, b;
static void *worker(void *arg) {
  int *mine = arg;
  for (int i = 0; i < 5; i++) { (*mine)++; a += b; }
  return 0;
}
int main(void) {
  pthread_t t;
  pthread_create(&t, 0, worker, &b);
  for (int i = 0; i < 2; i++) { a++; b += a; }
  pthread_join(t, 0);
  return 0;
}
