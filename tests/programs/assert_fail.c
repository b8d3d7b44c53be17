/* A failing assert in main after the join: the run ends in a violation, main has no exit
 * event. Nothing is printed before the abort (stdio buffers are not flushed by abort). */
#include <assert.h>
#include <pthread.h>
#include <stdio.h>

int shared;

static void *worker(void *arg) {
    (void)arg;
    shared += 2;
    return NULL;
}

int main(void) {
    pthread_t t;
    shared = 1;
    pthread_create(&t, NULL, worker, NULL);
    pthread_join(t, NULL);
    assert(shared == 4);
    puts("unreachable");
    return 0;
}
