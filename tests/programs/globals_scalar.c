/* Global scalars of several widths: a thread updates them, main reads them after the join. */
#include <pthread.h>
#include <stdio.h>

int counter;
long total = 10;
char flag;

static void *worker(void *arg) {
    (void)arg;
    counter++;        /* load counter, store counter */
    total += counter; /* load counter, load total, store total */
    flag = 1;         /* store flag */
    return NULL;
}

int main(void) {
    pthread_t t;
    counter = 5;
    pthread_create(&t, NULL, worker, NULL);
    pthread_join(t, NULL);
    printf("%d %ld %d\n", counter, total, flag);
    return 0;
}
