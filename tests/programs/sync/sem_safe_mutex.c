/* A binary semaphore (initial value 1) used as a mutex around a counter.
 * Thread A takes it with sem_wait; thread B first tries sem_trywait and falls
 * back to sem_wait when it gets EAGAIN. Inside the critical section
 * sem_getvalue must report a value <= 0 (POSIX allows 0 or minus the number
 * of waiters while the semaphore is held).
 * Expected: safe. */
#define _POSIX_C_SOURCE 200809L
#include <assert.h>
#include <errno.h>
#include <pthread.h>
#include <semaphore.h>
#include <stdio.h>

static sem_t lock;
static int counter = 0;

static void critical(void) {
  int v = 99;
  int rc = sem_getvalue(&lock, &v);
  assert(rc == 0);
  assert(v <= 0);
  counter++;
}

static void *thread_a(void *arg) {
  (void)arg;
  for (int i = 0; i < 2; i++) {
    sem_wait(&lock);
    critical();
    sem_post(&lock);
  }
  return NULL;
}

static void *thread_b(void *arg) {
  (void)arg;
  for (int i = 0; i < 2; i++) {
    if (sem_trywait(&lock) != 0) {
      assert(errno == EAGAIN);
      sem_wait(&lock);
    }
    critical();
    sem_post(&lock);
  }
  return NULL;
}

int main(void) {
  int rc = sem_init(&lock, 0, 1);
  assert(rc == 0);
  pthread_t a, b;
  pthread_create(&a, NULL, thread_a, NULL);
  pthread_create(&b, NULL, thread_b, NULL);
  pthread_join(a, NULL);
  pthread_join(b, NULL);
  int v = -1;
  sem_getvalue(&lock, &v);
  assert(v == 1);
  assert(counter == 4);
  sem_destroy(&lock);
  printf("sem_safe_mutex: ok counter=%d\n", counter);
  return 0;
}
