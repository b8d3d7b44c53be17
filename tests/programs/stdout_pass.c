/* stdout passthrough: output from a thread (while main waits in join) and from main through
 * printf, puts and fputs/fflush (the latter two load the external global `stdout`). */
#include <pthread.h>
#include <stdio.h>

int values[3];

static void *producer(void *arg) {
    (void)arg;
    for (int i = 0; i < 3; i++)
        values[i] = (i + 1) * 11;
    puts("producer done");
    return NULL;
}

int main(void) {
    pthread_t t;
    printf("start\n");
    fflush(stdout);
    pthread_create(&t, NULL, producer, NULL);
    pthread_join(t, NULL);
    for (int i = 0; i < 3; i++)
        printf("value %d = %d\n", i, values[i]);
    fputs("via fputs\n", stdout);
    puts("end");
    return 0;
}
