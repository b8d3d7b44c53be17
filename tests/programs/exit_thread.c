/* exit(3) from a thread while the other threads are blocked: T1 waits forever for the mutex
 * main holds, main waits forever to join T1 (T1 never ends, so the join never happens). T2
 * stores, prints and calls exit(3), ending the process. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

pthread_mutex_t gate = PTHREAD_MUTEX_INITIALIZER;
int progress;

static void *blocker(void *arg) {
    (void)arg;
    pthread_mutex_lock(&gate);
    progress = 100;
    pthread_mutex_unlock(&gate);
    return NULL;
}

static void *quitter(void *arg) {
    (void)arg;
    progress = 2;
    printf("thread exits with 3\n");
    exit(3);
}

int main(void) {
    pthread_t a, b;
    pthread_mutex_lock(&gate);
    progress = 1;
    pthread_create(&a, NULL, blocker, NULL);
    pthread_create(&b, NULL, quitter, NULL);
    pthread_join(a, NULL);
    printf("unreachable %d\n", progress);
    return 0;
}
