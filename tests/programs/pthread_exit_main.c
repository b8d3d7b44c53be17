/* main calls pthread_exit while its thread is still working; the process exits with status 0
 * once the last thread ends. pthread_mutex_init is not an event. */
#include <pthread.h>
#include <stdio.h>

pthread_mutex_t m;
int produced;

static void *worker(void *arg) {
    (void)arg;
    pthread_mutex_lock(&m);
    produced += 3;
    pthread_mutex_unlock(&m);
    printf("worker saw %d\n", produced);
    return NULL;
}

int main(void) {
    pthread_t t;
    pthread_mutex_init(&m, NULL);
    produced = 1;
    printf("main leaving\n");
    pthread_create(&t, NULL, worker, NULL);
    pthread_exit(NULL);
}
