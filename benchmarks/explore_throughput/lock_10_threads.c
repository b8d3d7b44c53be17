/* Executor throughput: 10 threads around one mutex, about 50 visible events (each thread:
 * lock, load, store, unlock, exit; main: 10 creates, 10 joins). */
#include <pthread.h>
static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
static int counter;
static void *worker(void *arg) {
  pthread_mutex_lock(&m);
  counter++;
  pthread_mutex_unlock(&m);
  return arg;
}
int main(void) {
  pthread_t t[10];
  for (int i = 0; i < 10; i++) pthread_create(&t[i], 0, worker, 0);
  for (int i = 0; i < 10; i++) pthread_join(t[i], 0);
  return counter == 10 ? 0 : 1;
}
