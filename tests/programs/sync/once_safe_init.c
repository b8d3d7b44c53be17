/* Three threads all call pthread_once on the same control; init() must run
 * exactly once and its effects must be visible to every caller once
 * pthread_once returns.
 * Expected: safe. */
#define _POSIX_C_SOURCE 200809L
#include <assert.h>
#include <pthread.h>
#include <stdio.h>

static pthread_once_t once = PTHREAD_ONCE_INIT;
static int init_runs = 0;
static int resource = 0;

static void init(void) {
  init_runs++;
  resource = 42;
}

static void *user(void *arg) {
  (void)arg;
  int rc = pthread_once(&once, init);
  assert(rc == 0);
  assert(resource == 42);
  assert(init_runs == 1);
  return NULL;
}

int main(void) {
  pthread_t t[3];
  for (int i = 0; i < 3; i++)
    pthread_create(&t[i], NULL, user, NULL);
  for (int i = 0; i < 3; i++)
    pthread_join(t[i], NULL);
  assert(init_runs == 1);
  printf("once_safe_init: ok init_runs=%d\n", init_runs);
  return 0;
}
