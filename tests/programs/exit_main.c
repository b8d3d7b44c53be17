/* exit(3) from main (inside a helper) after the join: main's last event is the end. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

int done;

static void *worker(void *arg) {
    (void)arg;
    done = 1;
    return NULL;
}

static void finish(void) {
    if (done) {
        printf("exiting with 3\n");
        exit(3);
    }
}

int main(void) {
    pthread_t t;
    pthread_create(&t, NULL, worker, NULL);
    pthread_join(t, NULL);
    finish();
    done = 2;
    return 0;
}
