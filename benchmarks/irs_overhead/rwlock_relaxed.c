/*
 * rwlock_relaxed -- what irs's own rwlock costs a run with no constraint left (ENFORCE under an
 * empty prefix), against the plain build on glibc's rwlock: READERS threads take and release the
 * read lock ITERS times each (reading two words that must be equal), one writer takes the write
 * lock ITERS/10 times (incrementing both). Prints `bad=0` (no reader saw the words differ) and
 * `work_us=<microseconds>` from the first pthread_create to the last pthread_join.
 */
#include <pthread.h>
#include <stdio.h>
#include <time.h>

#ifndef READERS
#define READERS 3
#endif
#ifndef ITERS
#define ITERS 20000
#endif

static pthread_rwlock_t l = PTHREAD_RWLOCK_INITIALIZER;
static volatile int a, b;

static void *reader(void *p) {
  long bad = 0;
  for (int i = 0; i < ITERS; i++) {
    pthread_rwlock_rdlock(&l);
    bad += a != b;
    pthread_rwlock_unlock(&l);
  }
  return (void *)bad;
}

static void *writer(void *p) {
  for (int i = 0; i < ITERS / 10; i++) {
    pthread_rwlock_wrlock(&l);
    a = a + 1;
    b = b + 1;
    pthread_rwlock_unlock(&l);
  }
  return p;
}

int main(void) {
  struct timespec t0, t1;
  clock_gettime(CLOCK_MONOTONIC, &t0);
  pthread_t t[READERS + 1];
  for (int i = 0; i < READERS; i++) pthread_create(&t[i], 0, reader, 0);
  pthread_create(&t[READERS], 0, writer, 0);
  long bad = 0;
  for (int i = 0; i <= READERS; i++) {
    void *r;
    pthread_join(t[i], &r);
    if (i < READERS) bad += (long)r;
  }
  clock_gettime(CLOCK_MONOTONIC, &t1);
  printf("bad=%ld\nwork_us=%.0f\n", bad, (t1.tv_sec - t0.tv_sec) * 1e6 + (t1.tv_nsec - t0.tv_nsec) / 1e3);
  return bad != 0;
}
