/* Benchmark: read the file named by argv[2] with open(2) + read(2) in chunks
 * of CHUNK bytes (argv[1]) and compute a byte checksum (sum of bytes mod
 * 2^32), while one worker thread increments a mutex-protected counter.
 * The file variant of tests/programs/inputs/chunks.c (which reads stdin).
 * Prints "bytes=<n> sum=<s>", then "work_us=<us>": the monotonic-clock time
 * from before the open to after the last read.
 */
#define _POSIX_C_SOURCE 200809L

#include <assert.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
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

static long long now_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (long long)ts.tv_sec * 1000000LL + ts.tv_nsec / 1000;
}

int main(int argc, char **argv)
{
    if (argc != 3) {
        fprintf(stderr, "usage: %s CHUNK FILE\n", argv[0]);
        return 2;
    }
    char *end;
    long chunk = strtol(argv[1], &end, 10);
    if (*end != '\0' || chunk <= 0 || chunk > (1L << 24)) {
        fprintf(stderr, "usage: %s CHUNK FILE\n", argv[0]);
        return 2;
    }

    unsigned char *buf = malloc((size_t)chunk);
    if (buf == NULL) {
        perror("malloc");
        return 2;
    }

    pthread_t t;
    pthread_create(&t, NULL, worker, NULL);

    long long start = now_us();
    int fd = open(argv[2], O_RDONLY);
    if (fd < 0) {
        perror(argv[2]);
        return 2;
    }
    unsigned long long bytes = 0;
    uint32_t sum = 0;
    for (;;) {
        ssize_t n = read(fd, buf, (size_t)chunk);
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
    long long work = now_us() - start;
    close(fd);

    pthread_join(t, NULL);
    free(buf);

    assert(counter == INCREMENTS);
    printf("bytes=%llu sum=%lu\n", bytes, (unsigned long)sum);
    printf("work_us=%lld\n", work);
    return 0;
}
