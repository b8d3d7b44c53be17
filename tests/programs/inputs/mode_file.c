/* Two workers increment a shared counter; the mode word is the first
 * line of the config file named by argv[1].
 *   careful : increments are protected by a mutex (always correct)
 *   fast    : unprotected read-then-write (lost updates possible)
 * Missing argument, unreadable file or unknown word: message on stderr, exit 2.
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
        fprintf(stderr, "usage: %s CONFIG-FILE\n", argv[0]);
        return 2;
    }

    FILE *f = fopen(argv[1], "r");
    if (f == NULL) {
        perror(argv[1]);
        return 2;
    }

    char line[64];
    if (fgets(line, sizeof line, f) == NULL) {
        fclose(f);
        fprintf(stderr, "%s: empty config file\n", argv[1]);
        return 2;
    }
    fclose(f);
    line[strcspn(line, "\r\n")] = '\0';

    if (strcmp(line, "careful") == 0) {
        careful = 1;
    } else if (strcmp(line, "fast") == 0) {
        careful = 0;
    } else {
        fprintf(stderr, "%s: first line must be careful or fast\n", argv[1]);
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
