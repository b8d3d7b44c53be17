/* Benchmark: read all of standard input with read(2) in chunks of CHUNK
 * bytes (argv[1], default 4096) and compute a byte checksum (sum of bytes
 * mod 2^32), while one worker thread increments a mutex-protected counter.
 * Prints "bytes=<n> sum=<s>".
 */
#define _POSIX_C_SOURCE 200809L

#include <assert.h>
#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#define INCREMENTS 10

static int counter;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

static void *worker(void *arg)
{
    (void)arg;
    for (int i = 0; i < INCREMENTS; i++) {
        pthread_mutex_lock(&lock);
        counter++;
        pthread_mutex_unlock(&lock);
    }
    return NULL;
}

int main(int argc, char **argv)
{
    long chunk = 4096;

    if (argc > 1) {
        char *end;
        chunk = strtol(argv[1], &end, 10);
        if (*end != '\0' || chunk <= 0 || chunk > (1L << 24)) {
            fprintf(stderr, "usage: %s [CHUNK]\n", argv[0]);
            return 2;
        }
    }

    unsigned char *buf = malloc((size_t)chunk);
    if (buf == NULL) {
        perror("malloc");
        return 2;
    }

    pthread_t t;
    pthread_create(&t, NULL, worker, NULL);

    unsigned long long bytes = 0;
    uint32_t sum = 0;
    for (;;) {
        ssize_t n = read(0, buf, (size_t)chunk);
        if (n < 0) {
            if (errno == EINTR)
                continue;
            perror("read");
            return 2;
        }
        if (n == 0)
            break;
        for (ssize_t i = 0; i < n; i++)
            sum += buf[i];
        bytes += (unsigned long long)n;
    }

    pthread_join(t, NULL);
    free(buf);

    assert(counter == INCREMENTS);
    printf("bytes=%llu sum=%lu\n", bytes, (unsigned long)sum);
    return 0;
}
