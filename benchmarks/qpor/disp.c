/*
 * disp -- a job dispatcher (DISP(JOBS, WORKERS)), our own program with the structure the QPOR
 * paper describes for its job-dispatcher benchmark (Table 1: DISP(5,2) .. DISP(5,6), trace
 * counts growing about 10x per worker, many SSB executions for k = 1, a few for k = 2 and 3).
 *
 * Build with -DJOBS=<jobs> (default 5) -DWORKERS=<workers> (default 3) -DRESOURCES=<r>
 * (default 2); WORKERS + 1 <= 63.
 *
 * Threads: one dispatcher and WORKERS workers (plus main). Mutexes: d (the idle stack), wm[w]
 * (worker w's mailbox), res[r] (the shared results of resource r; job j needs res[j % R]).
 *
 *   worker w:     lock d; push w on the idle stack; unlock d;
 *                 lock wm[w];                               -- checks its mailbox once
 *                   if a job j is there: lock res[j % R]; run j; unlock res[j % R]   (nested)
 *                   mark itself gone;
 *                 unlock wm[w]
 *   dispatcher:   for j = 0 .. JOBS-1:
 *                   lock d; pop an idle worker w, if any; unlock d;
 *                   if w: lock wm[w]; if w is not gone, put j in its mailbox; unlock wm[w]
 *                   if no worker took j (none idle, or it was gone): run j itself,
 *                     lock res[j % R]; run j; unlock res[j % R]
 *
 * A worker serves at most one job, and a worker that checks its mailbox before the dispatcher
 * delivered leaves without one, so which thread runs which job, and hence which threads meet on
 * which res[r], is decided by the races on d and on wm[w]: conditional, entangled interactions
 * and nested critical sections. Every run terminates (no loop waits for another thread).
 *
 * Every shared variable is accessed under one mutex (idle stack under d, mailbox and gone flag
 * under wm[w], results under res[r]), so a trace is fixed by the order of critical sections per
 * mutex. We have no closed form; the counts below come from an exhaustive enumeration of the
 * distinct per-mutex section orders of a model of this program (sleep sets + persistent sets,
 * cross-checked by plain enumeration of all interleavings on the smallest instances):
 *   JOBS = 5, RESOURCES = 2:  WORKERS = 1: 15, 2: 250, 3: 4,494, 4: 81,384.
 *
 * main creates the dispatcher then the workers, joins them and checks that every job ran
 * exactly once and that the results add up.
 */
#include <assert.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>

#ifndef JOBS
#define JOBS 5
#endif
#ifndef WORKERS
#define WORKERS 3
#endif
#ifndef RESOURCES
#define RESOURCES 2
#endif
#if JOBS < 1 || WORKERS < 1 || WORKERS > 62 || RESOURCES < 1
#error "need JOBS, WORKERS, RESOURCES >= 1 and WORKERS + 1 <= 63"
#endif

static pthread_mutex_t d = PTHREAD_MUTEX_INITIALIZER;
static int idle[WORKERS]; /* under d */
static int nidle;         /* under d */

static pthread_mutex_t wm[WORKERS];
static int mailbox[WORKERS]; /* under wm[w]: a job, or -1 */
static int gone[WORKERS];    /* under wm[w] */

static pthread_mutex_t res[RESOURCES];
static long result[RESOURCES]; /* under res[r] */
static int runs[RESOURCES];    /* under res[r] */
static int ran[JOBS];          /* under res[j % RESOURCES] */

static void run_job(int j) {
  int r = j % RESOURCES;
  pthread_mutex_lock(&res[r]);
  assert(ran[j] == 0);
  ran[j] = 1;
  result[r] += (long)(j + 1) * (j + 1);
  runs[r]++;
  pthread_mutex_unlock(&res[r]);
}

static void *worker(void *arg) {
  int w = (int)(intptr_t)arg;
  pthread_mutex_lock(&d);
  assert(nidle < WORKERS);
  idle[nidle++] = w;
  pthread_mutex_unlock(&d);
  pthread_mutex_lock(&wm[w]);
  int j = mailbox[w];
  if (j >= 0) run_job(j);
  gone[w] = 1;
  pthread_mutex_unlock(&wm[w]);
  return 0;
}

static void *dispatcher(void *arg) {
  (void)arg;
  for (int j = 0; j < JOBS; j++) {
    int w = -1, delivered = 0;
    pthread_mutex_lock(&d);
    if (nidle > 0) w = idle[--nidle];
    pthread_mutex_unlock(&d);
    if (w >= 0) {
      pthread_mutex_lock(&wm[w]);
      if (!gone[w]) {
        assert(mailbox[w] == -1);
        mailbox[w] = j;
        delivered = 1;
      }
      pthread_mutex_unlock(&wm[w]);
    }
    if (!delivered) run_job(j);
  }
  return 0;
}

int main(void) {
  pthread_t td, tw[WORKERS];
  for (int w = 0; w < WORKERS; w++) {
    pthread_mutex_init(&wm[w], 0);
    mailbox[w] = -1;
  }
  for (int r = 0; r < RESOURCES; r++) pthread_mutex_init(&res[r], 0);
  pthread_create(&td, 0, dispatcher, 0);
  for (int w = 0; w < WORKERS; w++) pthread_create(&tw[w], 0, worker, (void *)(intptr_t)w);
  pthread_join(td, 0);
  for (int w = 0; w < WORKERS; w++) pthread_join(tw[w], 0);
  long total = 0, expect = 0;
  int n = 0, by_workers = 0;
  for (int r = 0; r < RESOURCES; r++) total += result[r], n += runs[r];
  for (int j = 0; j < JOBS; j++) assert(ran[j] == 1), expect += (long)(j + 1) * (j + 1);
  for (int w = 0; w < WORKERS; w++) by_workers += mailbox[w] >= 0;
  assert(n == JOBS && total == expect);
  printf("jobs=%d by_workers=%d total=%ld\n", n, by_workers, total);
  return 0;
}
