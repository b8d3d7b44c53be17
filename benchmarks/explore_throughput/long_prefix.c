/* Executor throughput with an expensive prefix: main computes for a few milliseconds (no
 * visible events) before 4 threads do a little shared work. From main, every execution pays
 * for the computation; from a snapshot taken after the threads exist, none does. */
#include <pthread.h>
static int counter;
static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
static volatile unsigned long sink;
static void *worker(void *arg) {
  pthread_mutex_lock(&m);
  counter++;
  pthread_mutex_unlock(&m);
  return arg;
}
int main(void) {
  unsigned long x = 1;
  for (long i = 0; i < 3000000; i++) x = x * 6364136223846793005ul + 1442695040888963407ul;
  sink = x;
  pthread_t t[4];
  for (int i = 0; i < 4; i++) pthread_create(&t[i], 0, worker, 0);
  for (int i = 0; i < 4; i++) pthread_join(t[i], 0);
  return counter == 4 ? 0 : 1;
}
