/* pthread_mutex_trylock: fails on a mutex main holds across the thread's whole life, succeeds
 * on a free heap mutex (initialised with pthread_mutex_init, which is not an event). */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

pthread_mutex_t held = PTHREAD_MUTEX_INITIALIZER;
pthread_mutex_t *free_m;
int busy, got;

static void *worker(void *arg) {
    (void)arg;
    int r = pthread_mutex_trylock(&held);
    busy = (r != 0);
    r = pthread_mutex_trylock(free_m);
    got = (r == 0);
    if (r == 0)
        pthread_mutex_unlock(free_m);
    return NULL;
}

int main(void) {
    pthread_t t;
    free_m = malloc(sizeof *free_m);
    if (free_m == NULL)
        return 1;
    pthread_mutex_init(free_m, NULL);
    pthread_mutex_lock(&held);
    pthread_create(&t, NULL, worker, NULL);
    pthread_join(t, NULL);
    pthread_mutex_unlock(&held);
    printf("busy=%d got=%d\n", busy, got);
    pthread_mutex_destroy(free_m);
    free(free_m);
    return 0;
}
