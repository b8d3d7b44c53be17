// update_heap_push: Treiber pushes of heap nodes (the values compared are pointers into heap
// blocks, which the value model names by block: the same in every execution). main sets
// head = NULL; T1 and T2 each push one node they allocate, retrying with the head a failed
// compare-exchange returned (a read of it).
// Traces (hand count), reads commuting: each push loads head, then tries its CAS. Which
// thread's CAS comes first (2): it succeeds. The other thread loaded head before it (then its
// first CAS fails, a read, and the retry succeeds) or after it (its first CAS succeeds): 2.
// 2 x 2 = 4. Mazurkiewicz also orders the two first loads where both come before the first
// CAS: 2 x (1 + 2) = 6.
// expect-traces: 6
// expect-traces-reads-commute: 4
// expect-bugs: none
#include <assert.h>
#include <pthread.h>
#include <stdlib.h>

struct node {
  struct node *next;
};

struct node *head;

void *push(void *arg) {
  struct node *n = malloc(sizeof *n);
  struct node *old = __atomic_load_n(&head, __ATOMIC_SEQ_CST);
  do
    n->next = old;
  while (!__atomic_compare_exchange_n(&head, &old, n, 0, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST));
  return arg;
}

int main(void) {
  pthread_t a, b;
  __atomic_store_n(&head, 0, __ATOMIC_SEQ_CST);
  pthread_create(&a, 0, push, 0);
  pthread_create(&b, 0, push, 0);
  pthread_join(a, 0);
  pthread_join(b, 0);
  int count = 0;
  for (struct node *n = head; n; n = n->next)
    count++;
  assert(count == 2);
  return 0;
}
