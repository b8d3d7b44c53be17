/*
 * shared_pointer -- a reference-counted heap object shared through a global pointer
 * (after the "shared pointer" example of Gueta, Flanagan, Yahav and Sagiv,
 * "Cartesian Partial-Order Reduction", SPIN 2007).
 *
 * main allocates an object whose reference count (1) is owned by the global pointer
 * `shared`.  The user thread takes a reference under the mutex (if the pointer is still
 * set), works on the object's data without the lock, and drops its reference; the
 * releaser thread clears the global pointer under the mutex and drops the global's
 * reference.  Whoever drops the last reference frees the object.  The reference count
 * and the pointer are only touched with the mutex held, so in every schedule the object
 * is freed exactly once and never used after it is freed; main prints the number of
 * frees (always 1).
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#define DATA 4

struct object {
  int refs;
  int data[DATA];
};

struct object *shared;
pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
int frees;            /* protected by lock */

static double now_us(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}

/* Drop one reference; the caller holds lock. */
static void put_locked(struct object *o) {
  o->refs = o->refs - 1;
  if (o->refs == 0) {
    frees = frees + 1;
    free(o);
  }
}

static void *user(void *arg) {
  (void)arg;
  pthread_mutex_lock(&lock);
  struct object *o = shared;
  if (o)
    o->refs = o->refs + 1;
  pthread_mutex_unlock(&lock);
  if (!o)
    return 0;
  for (int k = 0; k < DATA; k++)          /* use the object: it cannot go away */
    o->data[k] = o->data[k] + k + 1;
  pthread_mutex_lock(&lock);
  put_locked(o);
  pthread_mutex_unlock(&lock);
  return 0;
}

static void *releaser(void *arg) {
  (void)arg;
  pthread_mutex_lock(&lock);
  struct object *o = shared;
  shared = 0;
  if (o)
    put_locked(o);
  pthread_mutex_unlock(&lock);
  return 0;
}

int main(void) {
  struct object *o = malloc(sizeof *o);
  if (!o)
    return 0;
  o->refs = 1;
  for (int k = 0; k < DATA; k++)
    o->data[k] = 0;
  shared = o;

  pthread_t t1, t2;
  double start = now_us();
  pthread_create(&t1, 0, user, 0);
  pthread_create(&t2, 0, releaser, 0);
  pthread_join(t1, 0);
  pthread_join(t2, 0);
  double end = now_us();
  printf("frees=%d\n", frees);
  printf("work_us=%.1f\n", end - start);
  return 0;
}
