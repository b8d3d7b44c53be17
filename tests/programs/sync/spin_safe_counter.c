/* pthread_spin_lock / pthread_spin_unlock around a shared counter; one
 * thread uses pthread_spin_trylock with a fallback to pthread_spin_lock.
 * Expected: safe. */
#define _POSIX_C_SOURCE 200809L
#include <assert.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>

static pthread_spinlock_t s;
static int counter = 0;

static void *plain(void *arg) {
  (void)arg;
  for (int i = 0; i < 2; i++) {
    pthread_spin_lock(&s);
    counter++;
    pthread_spin_unlock(&s);
  }
  return NULL;
}

static void *trying(void *arg) {
  (void)arg;
  for (int i = 0; i < 2; i++) {
    int rc = pthread_spin_trylock(&s);
    if (rc != 0) {
      assert(rc == EBUSY);
      pthread_spin_lock(&s);
    }
    counter++;
    pthread_spin_unlock(&s);
  }
  return NULL;
}

int main(void) {
  int rc = pthread_spin_init(&s, PTHREAD_PROCESS_PRIVATE);
  assert(rc == 0);
  pthread_t t1, t2;
  pthread_create(&t1, NULL, plain, NULL);
  pthread_create(&t2, NULL, trying, NULL);
  pthread_join(t1, NULL);
  pthread_join(t2, NULL);
  assert(counter == 4);
  pthread_spin_destroy(&s);
  printf("spin_safe_counter: ok counter=%d\n", counter);
  return 0;
}
