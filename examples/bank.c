/* The bundled example of `irs demo`: a small bank with a schedule-dependent bug.
 *
 * TELLERS tellers each move money from account i to account i+1. A transfer locks both
 * accounts (in index order, so there is no deadlock) and waits for the payment network to
 * authorise it (NET_US microseconds of I/O, simulated with usleep) before it moves the money.
 * Each teller then counts its transfer in the bank's statistics, under their own mutex.
 *
 * An interest payer credits 1% interest to account 0. It reads the balance under the account's
 * mutex, looks the rate up (some tens of microseconds of computation) *without* holding the mutex,
 * and then writes
 * balance + interest under the mutex again. That read-modify-write is not atomic: when teller 0
 * moves money out of account 0 between the read and the write, the write puts the old balance
 * back and the transfer is lost; money is created. main checks that the bank's total is the
 * initial total plus the interest paid, so the assertion fails exactly in those schedules.
 * With -DFIXED the payer holds the mutex across the lookup, and every schedule is correct.
 *
 * The last line of output is `work_us=N`: the time from the first pthread_create to the last
 * pthread_join, as the benchmark programs print it.
 */
#include <assert.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <time.h>
#include <unistd.h>

#ifndef TELLERS
#define TELLERS 5
#endif
#ifndef NET_US
#define NET_US 100
#endif
#define ACCOUNTS (TELLERS + 1)
#define START 1000

static long balance[ACCOUNTS];
static pthread_mutex_t account[ACCOUNTS];
static long interest_paid;
static int transfers;
static pthread_mutex_t stats = PTHREAD_MUTEX_INITIALIZER;

static void payment_network(void) { usleep(NET_US); }

/* The interest rate in basis points: a little computation that touches no shared memory. */
static long rate_lookup(long b) {
  volatile unsigned long h = (unsigned long)b;
  for (int i = 0; i < 20000; i++) h = h * 6364136223846793005ul + 1442695040888963407ul;
  return 100 + (long)(h % 1);
}

static void *pay_interest(void *arg) {
  (void)arg;
  pthread_mutex_lock(&account[0]);
  long b = balance[0];
#ifndef FIXED
  pthread_mutex_unlock(&account[0]);
#endif
  long paid = b * rate_lookup(b) / 10000;
#ifndef FIXED
  pthread_mutex_lock(&account[0]);
#endif
  balance[0] = b + paid; /* without FIXED: overwrites a transfer made meanwhile */
  pthread_mutex_unlock(&account[0]);
  interest_paid = paid;
  return 0;
}

static void *teller(void *arg) {
  int from = (int)(intptr_t)arg, to = from + 1;
  long amount = 10 * (from + 1);
  pthread_mutex_lock(&account[from]);
  pthread_mutex_lock(&account[to]);
  payment_network(); /* authorise the transfer */
  balance[from] -= amount;
  balance[to] += amount;
  pthread_mutex_unlock(&account[to]);
  pthread_mutex_unlock(&account[from]);
  pthread_mutex_lock(&stats);
  transfers = transfers + 1;
  pthread_mutex_unlock(&stats);
  return 0;
}

static double now_us(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}

int main(void) {
  pthread_t payer, t[TELLERS];
  for (int i = 0; i < ACCOUNTS; i++) {
    balance[i] = START;
    pthread_mutex_init(&account[i], 0);
  }
  double start = now_us();
  pthread_create(&payer, 0, pay_interest, 0);
  for (int i = 0; i < TELLERS; i++) pthread_create(&t[i], 0, teller, (void *)(intptr_t)i);
  pthread_join(payer, 0);
  for (int i = 0; i < TELLERS; i++) pthread_join(t[i], 0);
  double work = now_us() - start;
  long total = 0;
  for (int i = 0; i < ACCOUNTS; i++) total += balance[i];
  assert(total == ACCOUNTS * START + interest_paid);
  printf("total %ld after %d transfers\nwork_us=%.1f\n", total, transfers, work);
  return 0;
}
