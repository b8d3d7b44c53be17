/* GCC __sync builtins on globals and on a heap counter: fetch_and_add, add_and_fetch,
 * bool/val compare_and_swap, lock_test_and_set, lock_release, synchronize (a fence: no event). */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

long counter;
int value = 1;
int lockword;
int cas_ok, cas_old;
int *heap_count;

static void *worker(void *arg) {
    (void)arg;
    __sync_fetch_and_add(&counter, 5);
    __sync_add_and_fetch(&counter, 1);
    __sync_synchronize();
    __sync_fetch_and_add(heap_count, 1);
    return NULL;
}

int main(void) {
    pthread_t t1, t2;
    heap_count = calloc(1, sizeof *heap_count);
    if (heap_count == NULL)
        return 1;
    pthread_create(&t1, NULL, worker, NULL);
    pthread_create(&t2, NULL, worker, NULL);
    pthread_join(t1, NULL);
    pthread_join(t2, NULL);
    cas_ok = __sync_bool_compare_and_swap(&value, 1, 2);
    cas_old = __sync_val_compare_and_swap(&value, 5, 9);
    int was = __sync_lock_test_and_set(&lockword, 1);
    __sync_lock_release(&lockword);
    printf("%ld %d %d %d %d %d %d\n", counter, cas_ok, cas_old, value, was, lockword, *heap_count);
    free(heap_count);
    return 0;
}
