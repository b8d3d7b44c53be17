/* Executor throughput: 4 threads, about 200 visible events (each thread 25 read-modify-writes
 * of shared counters). */
#include <pthread.h>
static int c[4];
static void *worker(void *arg) {
  long id = (long)arg;
  for (int i = 0; i < 25; i++) c[(id + i) % 4]++;
  return 0;
}
int main(void) {
  pthread_t t[4];
  for (long i = 0; i < 4; i++) pthread_create(&t[i], 0, worker, (void *)i);
  for (int i = 0; i < 4; i++) pthread_join(t[i], 0);
  return 0;
}
