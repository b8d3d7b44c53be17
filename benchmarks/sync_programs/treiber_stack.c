/*
 * treiber_stack -- Treiber's lock-free stack with C11 atomics: `top` is an atomic pointer,
 * push links the new node to the top it read and publishes it with compare_exchange (retrying
 * with the top the failed exchange returned), pop swings `top` to the next node the same way.
 * THREADS threads push PUSHES nodes each, concurrently; after joining them main pops the stack
 * empty. Nodes come from a static pool and are never reused, so there is no ABA problem.
 *
 * Build with -DTHREADS=<T> (default 2), -DPUSHES=<per thread> (default 2).
 *
 * Checked: main pops exactly THREADS*PUSHES nodes, each once, and each thread's nodes come out
 * in the reverse of the order it pushed them (LIFO).
 *
 * -DBUG: push reads the top and then stores the new node with a plain atomic store instead of
 * a compare_exchange (each access is atomic, the pair is not), so two concurrent pushes can
 * link to the same top and one of them is lost.
 */
#include <assert.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>

#ifndef THREADS
#define THREADS 2
#endif
#ifndef PUSHES
#define PUSHES 2
#endif
#if THREADS < 1 || PUSHES < 1 || PUSHES > 9
#error "need THREADS >= 1 and 1 <= PUSHES <= 9"
#endif

struct node {
    int value; /* thread*10 + the push's number, from 1 */
    struct node *next;
};

static struct node pool[THREADS * PUSHES];
static _Atomic(struct node *) top;

static void push(struct node *n) {
    struct node *old = atomic_load(&top);
#ifdef BUG
    n->next = old;
    atomic_store(&top, n);
#else
    do
        n->next = old;
    while (!atomic_compare_exchange_strong(&top, &old, n));
#endif
}

static struct node *pop(void) {
    struct node *old = atomic_load(&top);
    while (old && !atomic_compare_exchange_strong(&top, &old, old->next))
        ;
    return old;
}

static void *pusher(void *arg) {
    int t = (int)(long)arg;
    for (int i = 0; i < PUSHES; i++) {
        struct node *n = &pool[t * PUSHES + i];
        n->value = t * 10 + i + 1;
        push(n);
    }
    return NULL;
}

int main(void) {
    pthread_t th[THREADS];
    atomic_init(&top, NULL);
    for (long t = 0; t < THREADS; t++)
        pthread_create(&th[t], NULL, pusher, (void *)t);
    for (int t = 0; t < THREADS; t++)
        pthread_join(th[t], NULL);
    int count = 0, seen[THREADS * PUSHES] = {0}, last[THREADS];
    for (int t = 0; t < THREADS; t++)
        last[t] = PUSHES + 1;
    for (struct node *n; (n = pop()) != NULL; count++) {
        int t = n->value / 10, i = n->value % 10;
        assert(t >= 0 && t < THREADS && i >= 1 && i <= PUSHES);
        assert(!seen[t * PUSHES + i - 1] && "a node popped twice");
        seen[t * PUSHES + i - 1] = 1;
        assert(i < last[t] && "a thread's nodes out of LIFO order");
        last[t] = i;
    }
    assert(count == THREADS * PUSHES && "nodes lost");
    printf("treiber_stack: %d threads pushed %d nodes each, popped %d: ok\n", THREADS, PUSHES, count);
    return 0;
}
