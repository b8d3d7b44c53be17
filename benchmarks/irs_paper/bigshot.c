/*
 * bigshot -- two threads, a shared pointer and a buffer (SV-COMP "bigshot" style).
 *
 * Thread 1 allocates an 8-byte buffer and publishes it in the shared pointer `v`;
 * thread 2 copies "Bigshot" into the buffer if the pointer is already set.  Both
 * threads are started before either is joined, so whether the string gets copied
 * depends on the schedule (thread 2 may look at `v` before thread 1 set it).  main
 * checks the content after both joins but does not assert: the check fails in the
 * schedules where thread 2 runs first, and the program must always exit 0.  The
 * result of the check is kept in the global `bigshot_copied` and not printed
 * because it is schedule-dependent.
 *
 * The copy is written as memcpy rather than strcpy: strcpy is an opaque libc call
 * whose write irs does not see, whereas a constant-size memcpy is the llvm.memcpy
 * intrinsic, which irs records as an access of the heap buffer.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

char *v;                 /* the shared pointer */
int bigshot_copied;      /* main's check: 1 when v holds "Bigshot" after the joins */

static double now_us(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}

static void *allocator(void *arg) {
  (void)arg;
  v = malloc(8);
  return 0;
}

static void *copier(void *arg) {
  (void)arg;
  char *p = v;
  if (p)
    memcpy(p, "Bigshot", 8);
  return 0;
}

int main(void) {
  pthread_t t1, t2;
  double start = now_us();
  pthread_create(&t1, 0, allocator, 0);
  pthread_create(&t2, 0, copier, 0);
  pthread_join(t1, 0);
  pthread_join(t2, 0);
  double end = now_us();

  char *p = v;
  /* The property SV-COMP asserts (v[0] == 'B'); here only recorded: it fails when the
     copier ran first, and then the buffer is uninitialised. */
  bigshot_copied = p != 0 && p[0] == 'B';
  free(p);
  printf("work_us=%.1f\n", end - start);
  return 0;
}
