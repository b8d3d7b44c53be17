/* A thread ends through pthread_exit called in a helper function; main collects the exit
 * value through pthread_join's second argument (which does not make `ret` escape). */
#include <pthread.h>
#include <stdio.h>

int stage;

static void finish(int code) {
    stage = code;
    pthread_exit((void *)(long)code);
}

static void *worker(void *arg) {
    (void)arg;
    stage = 1;
    finish(5);
    stage = 99;
    return NULL;
}

int main(void) {
    pthread_t t;
    void *ret = NULL;
    pthread_create(&t, NULL, worker, NULL);
    pthread_join(t, &ret);
    printf("%d %ld\n", stage, (long)ret);
    return 0;
}
