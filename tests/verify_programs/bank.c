// bank: two transfers between two accounts in opposite directions; each takes both account
// mutexes in a fixed global order (a before b), so there is no deadlock, and the total is
// conserved. Safe.
// Traces (hand count): the two transfers' critical sections in either order = 2.
// expect-traces: 2
// expect-bugs: none
#include <assert.h>
#include <pthread.h>

int balance_a = 100, balance_b = 50;
pthread_mutex_t ma = PTHREAD_MUTEX_INITIALIZER;
pthread_mutex_t mb = PTHREAD_MUTEX_INITIALIZER;

void *a_to_b(void *arg) {
  pthread_mutex_lock(&ma);
  pthread_mutex_lock(&mb);
  balance_a = balance_a - 30;
  balance_b = balance_b + 30;
  pthread_mutex_unlock(&mb);
  pthread_mutex_unlock(&ma);
  return arg;
}

void *b_to_a(void *arg) {
  pthread_mutex_lock(&ma);
  pthread_mutex_lock(&mb);
  balance_b = balance_b - 20;
  balance_a = balance_a + 20;
  pthread_mutex_unlock(&mb);
  pthread_mutex_unlock(&ma);
  return arg;
}

int main(void) {
  pthread_t p, q;
  pthread_create(&p, 0, a_to_b, 0);
  pthread_create(&q, 0, b_to_a, 0);
  pthread_join(p, 0);
  pthread_join(q, 0);
  assert(balance_a + balance_b == 150);
  return 0;
}
