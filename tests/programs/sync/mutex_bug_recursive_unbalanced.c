/* A recursive mutex locked twice but unlocked only once by thread A, which
 * then exits still owning it. If B locks the mutex before A, B finishes and
 * the program terminates; if A gets it first, B blocks forever and main
 * blocks joining B.
 * Expected: deadlock in some interleavings. */
#define _POSIX_C_SOURCE 200809L
#include <assert.h>
#include <pthread.h>
#include <stdio.h>

static pthread_mutex_t m;
static int counter = 0;

static void *thread_a(void *arg) {
  (void)arg;
  pthread_mutex_lock(&m);
  pthread_mutex_lock(&m);
  counter++;
  pthread_mutex_unlock(&m); /* BUG: second unlock missing */
  return NULL;
}

static void *thread_b(void *arg) {
  (void)arg;
  pthread_mutex_lock(&m);
  counter++;
  pthread_mutex_unlock(&m);
  return NULL;
}

int main(void) {
  pthread_mutexattr_t attr;
  pthread_mutexattr_init(&attr);
  pthread_mutexattr_settype(&attr, PTHREAD_MUTEX_RECURSIVE);
  pthread_mutex_init(&m, &attr);
  pthread_mutexattr_destroy(&attr);

  pthread_t a, b;
  pthread_create(&a, NULL, thread_a, NULL);
  pthread_create(&b, NULL, thread_b, NULL);
  pthread_join(a, NULL);
  pthread_join(b, NULL);
  printf("mutex_bug_recursive_unbalanced: ok\n");
  return 0;
}
