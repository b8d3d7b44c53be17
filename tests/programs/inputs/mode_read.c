/* Two workers increment a shared counter; the mode is read from standard
 * input with raw read(2) calls of 4 bytes each, until end of file.
 *   input starting with "careful" : increments protected by a mutex
 *   input starting with "fast"    : unprotected read-then-write
 * Anything else: usage message on stderr, exit 2.
 */
#define _POSIX_C_SOURCE 200809L

#include <assert.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

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

int main(void)
{
    char text[64];
    size_t len = 0;
    char buf[4];

    for (;;) {
        ssize_t n = read(0, buf, sizeof buf);
        if (n < 0) {
            if (errno == EINTR)
                continue;
            perror("read");
            return 2;
        }
        if (n == 0)
            break;
        for (ssize_t i = 0; i < n; i++)
            if (len < sizeof text - 1)
                text[len++] = buf[i];
    }
    text[len] = '\0';

    if (strncmp(text, "careful", 7) == 0) {
        careful = 1;
    } else if (strncmp(text, "fast", 4) == 0) {
        careful = 0;
    } else {
        fprintf(stderr, "usage: echo careful|fast | mode_read\n");
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
