/*
 * pool -- a thread pool (POL(TASKS, WORKERS)), our own program with the concurrency structure
 * the QPOR paper describes for its thread-pool benchmark (Table 1, POL(n,3): n + 7 threads,
 * 3K..12K maximal configurations for n = 7..12, growing polynomially in n, with many SSB
 * executions for k = 1 and almost none for k = 3).
 *
 * Build with -DTASKS=<n> (default 7) -DWORKERS=<m> (default 3); TASKS + WORKERS + 1 <= 63.
 *
 * Threads (TASKS + WORKERS + 1, plus main):
 *   submitter:       publishes tasks 1..n-1 one at a time (task 0 is published from the start):
 *                      n-1 times: lock q; published++; unlock q
 *   worker w (m):    takes the newest published task, LIFO as in work-stealing pools:
 *                      lock q; t = published - 1; taken++; unlock q;
 *                      lock task[t].m; run task t with its current argument; task[t].runs++;
 *                      unlock task[t].m
 *   client i (n):    configures its task concurrently:
 *                      lock task[i].m; task[i].arg = i + 1; unlock task[i].m
 * A task run before its client configured it runs with the default argument 0.
 *
 * Every shared variable is accessed under one mutex (published and taken under q; a task's
 * fields under its own mutex), so a trace is fixed by the order of critical sections per mutex.
 * Count for m workers: on q, each worker's section falls into one of the n gaps around the
 * submitter's n-1 sections (gap v means it takes task v); workers in the same gap are ordered
 * among themselves (a! orders for a workers). On task t's mutex, the a_t workers that took t
 * and client t are ordered in (a_t + 1)! ways. Summing over the maps f: workers -> gaps,
 *
 *   traces = sum_f prod_t a_t! (a_t + 1)!,     a_t = |f^-1(t)|
 *
 * which for m = 3 is  8 n(n-1)(n-2) + 72 n(n-1) + 144 n  (three distinct tasks: 1*2 each;
 * two on one task: 2!3! * 1!2! = 24, three ways to choose the pair; all on one: 3!4! = 144):
 * n = 3: 912, 4: 1,632, 5: 2,640, 6: 3,984, 7: 5,712, 8: 7,872, 9: 10,512, 10: 13,680,
 * 11: 17,424, 12: 21,792. Which worker races with which client depends on the race on q, and
 * with 3 workers on q races are entangled with up to 3 others, so k = 1 and 2 hit SSBs.
 *
 * main creates submitter, workers, clients (in that order), joins them and checks: m tasks
 * were taken, the runs add up to m, only published tasks ran, every argument was set.
 */
#include <assert.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>

#ifndef TASKS
#define TASKS 7
#endif
#ifndef WORKERS
#define WORKERS 3
#endif
#if TASKS < 1 || WORKERS < 1 || TASKS + WORKERS > 62
#error "need TASKS >= 1, WORKERS >= 1, TASKS + WORKERS + 1 <= 63"
#endif

struct task {
  pthread_mutex_t m;
  int arg;     /* set by the task's client */
  int runs;    /* how often a worker ran it */
  long result; /* sum of the results of its runs */
};

static pthread_mutex_t q = PTHREAD_MUTEX_INITIALIZER;
static int published = 1; /* under q: tasks 0..published-1 are available */
static int taken;         /* under q */
static struct task task[TASKS];

static long run_task(int t, int arg) { return (long)(t + 1) * 100 + arg; }

static void *submitter(void *arg) {
  (void)arg;
  for (int i = 1; i < TASKS; i++) {
    pthread_mutex_lock(&q);
    published++;
    pthread_mutex_unlock(&q);
  }
  return 0;
}

static void *worker(void *arg) {
  (void)arg;
  pthread_mutex_lock(&q);
  int t = published - 1;
  taken++;
  assert(t >= 0 && t < TASKS);
  pthread_mutex_unlock(&q);
  pthread_mutex_lock(&task[t].m);
  task[t].result += run_task(t, task[t].arg);
  task[t].runs++;
  pthread_mutex_unlock(&task[t].m);
  return 0;
}

static void *client(void *arg) {
  int i = (int)(intptr_t)arg;
  pthread_mutex_lock(&task[i].m);
  task[i].arg = i + 1;
  pthread_mutex_unlock(&task[i].m);
  return 0;
}

int main(void) {
  pthread_t s, w[WORKERS], c[TASKS];
  for (int i = 0; i < TASKS; i++) pthread_mutex_init(&task[i].m, 0);
  pthread_create(&s, 0, submitter, 0);
  for (int i = 0; i < WORKERS; i++) pthread_create(&w[i], 0, worker, 0);
  for (int i = 0; i < TASKS; i++) pthread_create(&c[i], 0, client, (void *)(intptr_t)i);
  pthread_join(s, 0);
  for (int i = 0; i < WORKERS; i++) pthread_join(w[i], 0);
  for (int i = 0; i < TASKS; i++) pthread_join(c[i], 0);
  int runs = 0;
  long total = 0;
  for (int i = 0; i < TASKS; i++) {
    runs += task[i].runs;
    total += task[i].result;
    assert(task[i].arg == i + 1);
  }
  assert(taken == WORKERS && runs == WORKERS && published == TASKS);
  printf("runs=%d total=%ld\n", runs, total);
  return 0;
}
