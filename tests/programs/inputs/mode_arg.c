/* Two workers increment a shared counter; the mode comes from argv[1].
 *   careful : increments are protected by a mutex (always correct)
 *   fast    : unprotected read-then-write (lost updates possible)
 */
#define _POSIX_C_SOURCE 200809L

#include <assert.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define INCREMENTS 3
#define EXPECTED (2 * INCREMENTS)
/* Busy-wait between the read and the write of an increment, so that the
 * unprotected mode loses updates in ordinary runs (no sleeping). */
#define WINDOW 20000

static int counter;
static int careful;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

static void *worker(void *arg)
{
    (void)arg;
    for (int i = 0; i < INCREMENTS; i++) {
        if (careful)
            pthread_mutex_lock(&lock);
        int v = counter;
        for (volatile int spin = 0; spin < WINDOW; spin++)
            ;
        counter = v + 1;
        if (careful)
            pthread_mutex_unlock(&lock);
    }
    return NULL;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: %s careful|fast\n", argv[0]);
        return 2;
    }
    if (strcmp(argv[1], "careful") == 0) {
        careful = 1;
    } else if (strcmp(argv[1], "fast") == 0) {
        careful = 0;
    } else {
        fprintf(stderr, "usage: %s careful|fast\n", argv[0]);
        return 2;
    }

    pthread_t t1, t2;
    pthread_create(&t1, NULL, worker, NULL);
    pthread_create(&t2, NULL, worker, NULL);
    pthread_join(t1, NULL);
    pthread_join(t2, NULL);

    assert(counter == EXPECTED);
    printf("counter=%d\n", counter);
    return 0;
}
