/* C11 atomics: atomic_store/load, fetch_add (seq_cst and relaxed), ++ on an _Atomic object,
 * compare_exchange_strong (success and failure), atomic_exchange, atomic_init (a plain store).
 * The `expected` locals stay non-escaping (the operations are builtins, not calls). */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>

atomic_int hits;
atomic_long last;
_Atomic int bumps;

static void *worker(void *arg) {
    (void)arg;
    atomic_fetch_add(&hits, 1);
    atomic_fetch_add_explicit(&hits, 1, memory_order_relaxed);
    bumps++;
    return NULL;
}

int main(void) {
    pthread_t t1, t2;
    atomic_store(&hits, 10);
    atomic_init(&last, 5);
    pthread_create(&t1, NULL, worker, NULL);
    pthread_create(&t2, NULL, worker, NULL);
    pthread_join(t1, NULL);
    pthread_join(t2, NULL);
    int h = atomic_load(&hits);
    int expected = 14;
    int ok1 = atomic_compare_exchange_strong(&hits, &expected, 100);
    expected = 0;
    int ok2 = atomic_compare_exchange_strong(&hits, &expected, 200);
    long old = atomic_exchange(&last, 7);
    printf("%d %d %d %d %ld %d %d\n", h, ok1, ok2, expected, old, atomic_load(&hits), bumps);
    return 0;
}
