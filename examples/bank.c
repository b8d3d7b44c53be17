/* The bundled example of `irs demo`: two tellers move money between accounts under a lock,
 * and an auditor thread reads the total without one. The total it sees depends on the
 * schedule, which is exactly what IRS constrains. */
#include <pthread.h>
#include <stdio.h>

#define ACCOUNTS 4
int balance[ACCOUNTS] = {100, 100, 100, 100};
int audited_total;
pthread_mutex_t bank = PTHREAD_MUTEX_INITIALIZER;

struct teller { int from, to, amount; };

void *teller(void *arg) {
  struct teller *t = arg;
  pthread_mutex_lock(&bank);
  balance[t->from] -= t->amount;
  balance[t->to] += t->amount;
  pthread_mutex_unlock(&bank);
  return 0;
}

void *auditor(void *arg) {
  (void)arg;
  int sum = 0;
  for (int i = 0; i < ACCOUNTS; i++) sum += balance[i];
  audited_total = sum;
  return 0;
}

int main(void) {
  static struct teller jobs[2] = {{0, 1, 30}, {2, 3, 50}};
  pthread_t t[3];
  pthread_create(&t[0], 0, teller, &jobs[0]);
  pthread_create(&t[1], 0, teller, &jobs[1]);
  pthread_create(&t[2], 0, auditor, 0);
  for (int i = 0; i < 3; i++) pthread_join(t[i], 0);
  printf("audited total %d (expected 400)\n", audited_total);
  return 0;
}
