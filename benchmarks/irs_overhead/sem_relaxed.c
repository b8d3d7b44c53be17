/*
 * sem_relaxed -- what irs's own semaphores cost a run with no constraint left (ENFORCE under an
 * empty prefix), against the plain build on glibc's: PAIRS producer/consumer pairs hand ITERS
 * items each through a ring of 4 slots guarded by two semaphores (free slots, full slots) and a
 * mutex. Prints `bad=0` (every item arrived, in order) and `work_us=<microseconds>` from the
 * first pthread_create to the last pthread_join.
 */
#include <pthread.h>
#include <semaphore.h>
#include <stdio.h>
#include <time.h>

#ifndef PAIRS
#define PAIRS 2
#endif
#ifndef ITERS
#define ITERS 20000
#endif

struct ring { sem_t free, full; int slot[4], head, tail; };
static struct ring rings[PAIRS];

static void *producer(void *p) {
  struct ring *r = p;
  for (int i = 0; i < ITERS; i++) {
    sem_wait(&r->free);
    r->slot[r->tail++ % 4] = i;
    sem_post(&r->full);
  }
  return 0;
}

static void *consumer(void *p) {
  struct ring *r = p;
  long bad = 0;
  for (int i = 0; i < ITERS; i++) {
    sem_wait(&r->full);
    bad += r->slot[r->head++ % 4] != i;
    sem_post(&r->free);
  }
  return (void *)bad;
}

int main(void) {
  struct timespec t0, t1;
  for (int i = 0; i < PAIRS; i++) {
    sem_init(&rings[i].free, 0, 4);
    sem_init(&rings[i].full, 0, 0);
  }
  clock_gettime(CLOCK_MONOTONIC, &t0);
  pthread_t t[2 * PAIRS];
  for (int i = 0; i < PAIRS; i++) {
    pthread_create(&t[2 * i], 0, producer, &rings[i]);
    pthread_create(&t[2 * i + 1], 0, consumer, &rings[i]);
  }
  long bad = 0;
  for (int i = 0; i < 2 * PAIRS; i++) {
    void *r;
    pthread_join(t[i], &r);
    bad += (long)r;
  }
  clock_gettime(CLOCK_MONOTONIC, &t1);
  printf("bad=%ld\nwork_us=%.0f\n", bad, (t1.tv_sec - t0.tv_sec) * 1e6 + (t1.tv_nsec - t0.tv_nsec) / 1e3);
  return bad != 0;
}
