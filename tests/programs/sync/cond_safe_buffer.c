/* One-slot buffer: a producer puts 1,2,3 and a consumer takes them in order.
 * Both sides wait with the usual while-predicate loop under the mutex.
 * Expected: safe (assertions hold, no deadlock). */
#define _POSIX_C_SOURCE 200809L
#include <assert.h>
#include <pthread.h>
#include <stdio.h>

#define N 3

static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t not_empty = PTHREAD_COND_INITIALIZER;
static pthread_cond_t not_full = PTHREAD_COND_INITIALIZER;
static int full = 0;  /* 1 if the slot holds a value */
static int slot = 0;
static int consumed_sum = 0;

static void *producer(void *arg) {
  (void)arg;
  for (int i = 1; i <= N; i++) {
    pthread_mutex_lock(&m);
    while (full)
      pthread_cond_wait(&not_full, &m);
    slot = i;
    full = 1;
    pthread_cond_signal(&not_empty);
    pthread_mutex_unlock(&m);
  }
  return NULL;
}

static void *consumer(void *arg) {
  (void)arg;
  for (int i = 1; i <= N; i++) {
    pthread_mutex_lock(&m);
    while (!full)
      pthread_cond_wait(&not_empty, &m);
    assert(slot == i); /* values arrive in order, none lost or duplicated */
    consumed_sum += slot;
    full = 0;
    pthread_cond_signal(&not_full);
    pthread_mutex_unlock(&m);
  }
  return NULL;
}

int main(void) {
  pthread_t p, c;
  pthread_create(&p, NULL, producer, NULL);
  pthread_create(&c, NULL, consumer, NULL);
  pthread_join(p, NULL);
  pthread_join(c, NULL);
  assert(full == 0);
  assert(consumed_sum == 1 + 2 + 3);
  printf("cond_safe_buffer: ok sum=%d\n", consumed_sum);
  return 0;
}
