/* exit(0) from a thread, with an exit handler that reads a global: glibc's exit runs the calling
 * thread's thread-local destructors before the handlers, and the handler's access is recorded
 * after them (the recorder once kept its per-thread state in a thread-local that was gone by
 * then, and aborted the program). */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

int progress;

static void report(void) {
    printf("progress %d\n", progress);
}

static void *quitter(void *arg) {
    (void)arg;
    progress = 7;
    exit(0);
}

int main(void) {
    pthread_t t;
    atexit(report);
    pthread_create(&t, NULL, quitter, NULL);
    pthread_join(t, NULL);
    printf("unreachable\n");
    return 1;
}
