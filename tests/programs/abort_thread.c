/* abort() in a thread while main waits to join it: outcome `violation abort`. The aborting
 * thread has no exit event, and main's join of it never completes. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

int state;

static void *worker(void *arg) {
    (void)arg;
    state++;
    if (state == 2)
        abort();
    return NULL;
}

int main(void) {
    pthread_t t;
    state = 1;
    pthread_create(&t, NULL, worker, NULL);
    pthread_join(t, NULL);
    printf("unreachable %d\n", state);
    return 0;
}
