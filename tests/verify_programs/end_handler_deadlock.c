// end_handler_deadlock: main's exit handler locks a mutex; a thread main never joins holds it
// while it waits for a second mutex, which main holds when it returns. The thread may take the
// first mutex before main returns (then main's exit handler waits for it for good, and the
// thread waits for main's mutex: the process hangs at its end, a deadlock) or not (the handler
// takes the mutex, the end kills the thread wherever it waits).
// expect-bugs: deadlock
#include <pthread.h>
#include <stdlib.h>

pthread_mutex_t a = PTHREAD_MUTEX_INITIALIZER, b = PTHREAD_MUTEX_INITIALIZER;

static void handler(void) {
  pthread_mutex_lock(&a);
  pthread_mutex_unlock(&a);
}

void *worker(void *arg) {
  pthread_mutex_lock(&a);
  pthread_mutex_lock(&b);
  pthread_mutex_unlock(&b);
  pthread_mutex_unlock(&a);
  return arg;
}

int main(void) {
  pthread_t t;
  atexit(handler);
  pthread_mutex_lock(&b);
  pthread_create(&t, 0, worker, 0);
  return 0;
}
