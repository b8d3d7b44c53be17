/* Objects and threads that come and go: every round makes a mutex, a condition variable, a
 * semaphore, an rwlock and a barrier in fresh heap blocks, two threads that wait on them (one on
 * the condition variable, one on the semaphore; both at the rwlock and the barrier), then joins
 * the threads and destroys and frees everything. What the runtime keeps per object and per
 * thread must go with them: the memory of a run does not grow with the rounds, and the
 * program's heap sees as many frees as allocations. Prints its peak RSS on stderr. */
#include <pthread.h>
#include <semaphore.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>

struct round {
  pthread_mutex_t m;
  pthread_cond_t c;
  sem_t s;
  pthread_rwlock_t rw;
  pthread_barrier_t b;
  int ready;
  long sum;
};

static void *waits_on_cond(void *p) {
  struct round *r = p;
  pthread_mutex_lock(&r->m);
  while (!r->ready)
    pthread_cond_wait(&r->c, &r->m);
  pthread_mutex_unlock(&r->m);
  pthread_rwlock_rdlock(&r->rw);
  long v = r->sum;
  pthread_rwlock_unlock(&r->rw);
  pthread_barrier_wait(&r->b);
  return (void *)v;
}

static void *waits_on_sem(void *p) {
  struct round *r = p;
  sem_wait(&r->s);
  pthread_rwlock_wrlock(&r->rw);
  r->sum += 1;
  pthread_rwlock_unlock(&r->rw);
  pthread_barrier_wait(&r->b);
  return 0;
}

int main(int argc, char **argv) {
  int rounds = argc > 1 ? atoi(argv[1]) : 100;
  long total = 0;
  for (int i = 0; i < rounds; i++) {
    struct round *r = calloc(1, sizeof *r);
    pthread_mutex_init(&r->m, 0);
    pthread_cond_init(&r->c, 0);
    sem_init(&r->s, 0, 0);
    pthread_rwlock_init(&r->rw, 0);
    pthread_barrier_init(&r->b, 0, 3);
    pthread_t a, b;
    pthread_create(&a, 0, waits_on_cond, r);
    pthread_create(&b, 0, waits_on_sem, r);
    pthread_mutex_lock(&r->m);
    r->ready = 1;
    pthread_cond_broadcast(&r->c);
    pthread_mutex_unlock(&r->m);
    sem_post(&r->s);
    pthread_barrier_wait(&r->b);
    void *v;
    pthread_join(a, &v);
    pthread_join(b, 0);
    total += r->sum + (long)v;
    pthread_barrier_destroy(&r->b);
    pthread_rwlock_destroy(&r->rw);
    sem_destroy(&r->s);
    pthread_cond_destroy(&r->c);
    pthread_mutex_destroy(&r->m);
    free(r);
  }
  struct rusage u;
  getrusage(RUSAGE_SELF, &u);
  fprintf(stderr, "maxrss_kb %ld\n", u.ru_maxrss);
  printf("rounds %d total %ld\n", rounds, total >= rounds ? (long)rounds : -1L);
  return 0;
}
