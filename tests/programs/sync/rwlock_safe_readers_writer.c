/* Two readers and one writer share a pair (a, b) that must always be equal.
 * Reader 1 uses pthread_rwlock_rdlock; reader 2 tries
 * pthread_rwlock_tryrdlock first and falls back to rdlock on EBUSY; the
 * writer tries pthread_rwlock_trywrlock first and falls back to wrlock on
 * EBUSY. The writer does a read-modify-write of both fields; main checks the
 * update after joining, and that a final trywrlock succeeds.
 * Expected: safe. */
#define _POSIX_C_SOURCE 200809L
#include <assert.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>

static pthread_rwlock_t rw = PTHREAD_RWLOCK_INITIALIZER;
static int a = 0, b = 0;
static int seen1 = -1, seen2 = -1;

static void *reader1(void *arg) {
  (void)arg;
  pthread_rwlock_rdlock(&rw);
  assert(a == b);
  seen1 = a;
  pthread_rwlock_unlock(&rw);
  return NULL;
}

static void *reader2(void *arg) {
  (void)arg;
  int rc = pthread_rwlock_tryrdlock(&rw);
  if (rc != 0) {
    assert(rc == EBUSY);
    pthread_rwlock_rdlock(&rw);
  }
  assert(a == b);
  seen2 = b;
  pthread_rwlock_unlock(&rw);
  return NULL;
}

static void *writer(void *arg) {
  (void)arg;
  int rc = pthread_rwlock_trywrlock(&rw);
  if (rc != 0) {
    assert(rc == EBUSY);
    pthread_rwlock_wrlock(&rw);
  }
  int old = a;
  a = old + 1;
  b = old + 1;
  pthread_rwlock_unlock(&rw);
  return NULL;
}

int main(void) {
  pthread_t r1, r2, w;
  pthread_create(&r1, NULL, reader1, NULL);
  pthread_create(&r2, NULL, reader2, NULL);
  pthread_create(&w, NULL, writer, NULL);
  pthread_join(r1, NULL);
  pthread_join(r2, NULL);
  pthread_join(w, NULL);
  assert(a == 1 && b == 1);                 /* the writer's update is there */
  assert(seen1 == 0 || seen1 == 1);
  assert(seen2 == 0 || seen2 == 1);
  int rc = pthread_rwlock_trywrlock(&rw);   /* nobody holds it any more */
  assert(rc == 0);
  pthread_rwlock_unlock(&rw);
  pthread_rwlock_destroy(&rw);
  printf("rwlock_safe_readers_writer: ok a=%d b=%d\n", a, b);
  return 0;
}
