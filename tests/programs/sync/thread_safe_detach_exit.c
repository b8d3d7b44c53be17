/* pthread_detach, pthread_exit from a non-main thread, sched_yield.
 *  - T1 is joinable; it leaves through pthread_exit called from a nested
 *    function, and main checks the value passed to pthread_exit via join.
 *  - T2 is detached by main with pthread_detach; it cannot be joined, so it
 *    reports completion with a semaphore, which main waits on.
 *  - Both threads call sched_yield, which has no effect on correctness.
 * Expected: safe. */
#define _POSIX_C_SOURCE 200809L
#include <assert.h>
#include <pthread.h>
#include <sched.h>
#include <semaphore.h>
#include <stdio.h>

static int t1_result = 0;
static int t2_data = 0;
static sem_t t2_done;

static void finish(int v) {
  t1_result = v;
  pthread_exit(&t1_result); /* does not return */
}

static void *t1_main(void *arg) {
  (void)arg;
  sched_yield();
  finish(7);
  assert(0 && "unreachable after pthread_exit");
  return NULL;
}

static void *t2_main(void *arg) {
  (void)arg;
  t2_data = 5;
  sched_yield();
  sem_post(&t2_done);
  return NULL;
}

int main(void) {
  sem_init(&t2_done, 0, 0);
  pthread_t t1, t2;
  pthread_create(&t1, NULL, t1_main, NULL);
  pthread_create(&t2, NULL, t2_main, NULL);
  int rc = pthread_detach(t2);
  assert(rc == 0);
  sched_yield();

  void *ret = NULL;
  rc = pthread_join(t1, &ret);
  assert(rc == 0);
  assert(ret == &t1_result);
  assert(*(int *)ret == 7);

  sem_wait(&t2_done);
  assert(t2_data == 5);
  printf("thread_safe_detach_exit: ok t1=%d t2=%d\n", t1_result, t2_data);
  return 0;
}
