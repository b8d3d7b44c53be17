/* A lock-free (Treiber) stack built on atomic_compare_exchange_strong.
 * Two threads each push one statically allocated node and then pop one.
 * Nodes are never freed or pushed again, so ABA cannot happen.
 * Each CAS retry loop is bounded to 3 attempts: a CAS of one thread can only
 * fail because the other thread completed a CAS in between, and the other
 * thread completes at most 2 CASes in total, so 3 attempts always suffice;
 * this is asserted.
 * Each pop finds the stack non-empty: when a thread pops, it has pushed one
 * node, and the other thread has popped at most once, only after pushing.
 * Expected: safe. */
#define _POSIX_C_SOURCE 200809L
#include <assert.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>

struct node {
  int value;
  struct node *next;
};

static _Atomic(struct node *) top = NULL;
static struct node nodes[2];
static int popped[2];

static void push(struct node *n) {
  struct node *old = atomic_load(&top);
  int done = 0;
  for (int attempt = 0; attempt < 3 && !done; attempt++) {
    n->next = old;
    done = atomic_compare_exchange_strong(&top, &old, n);
  }
  assert(done);
}

static struct node *pop(void) {
  struct node *old = atomic_load(&top);
  int done = 0;
  for (int attempt = 0; attempt < 3 && !done; attempt++) {
    assert(old != NULL);
    done = atomic_compare_exchange_strong(&top, &old, old->next);
  }
  assert(done);
  return old;
}

static void *thr(void *arg) {
  int id = *(int *)arg;
  nodes[id].value = 100 + id;
  push(&nodes[id]);
  struct node *n = pop();
  popped[id] = n->value;
  return NULL;
}

int main(void) {
  pthread_t t[2];
  int ids[2] = {0, 1};
  pthread_create(&t[0], NULL, thr, &ids[0]);
  pthread_create(&t[1], NULL, thr, &ids[1]);
  pthread_join(t[0], NULL);
  pthread_join(t[1], NULL);
  assert(atomic_load(&top) == NULL);
  /* each node popped exactly once */
  assert((popped[0] == 100 && popped[1] == 101) ||
         (popped[0] == 101 && popped[1] == 100));
  printf("atomic_safe_cas_stack: ok popped=%d,%d\n", popped[0], popped[1]);
  return 0;
}
