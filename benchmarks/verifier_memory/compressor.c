/* A compressor-shaped program: N workers take blocks from a shared queue under a mutex and
   condition variable, run-length encode them, write the output into shared arrays, and keep
   unlocked statistics (a benign data race, as real compressors' progress counters are). */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifndef NBLOCKS
#define NBLOCKS 64
#endif
#define BLOCK 32
#define NWORKERS 3

static unsigned char input[NBLOCKS * BLOCK];
static unsigned char output[NBLOCKS][2 * BLOCK];
static int out_len[NBLOCKS];
static int next_block, done_blocks;
static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t finished = PTHREAD_COND_INITIALIZER;
static long total;
static int stats[8];

static int rle(const unsigned char *in, int n, unsigned char *out) {
    int o = 0;
    for (int i = 0; i < n;) {
        int j = i;
        while (j < n && in[j] == in[i] && j - i < 255) j++;
        out[o++] = (unsigned char)(j - i);
        out[o++] = in[i];
        i = j;
    }
    return o;
}

static void *worker(void *arg) {
    (void)arg;
    for (;;) {
        pthread_mutex_lock(&m);
        if (next_block >= NBLOCKS) {
            pthread_mutex_unlock(&m);
            return 0;
        }
        int b = next_block++;
        pthread_mutex_unlock(&m);
        unsigned char *local = malloc(2 * BLOCK);
        int n = rle(input + b * BLOCK, BLOCK, local);
        memcpy(output[b], local, n);
        free(local);
        stats[n % 8]++; /* unlocked */
        pthread_mutex_lock(&m);
        out_len[b] = n;
        total += n;
        done_blocks++;
        pthread_cond_signal(&finished);
        pthread_mutex_unlock(&m);
    }
}

int main(void) {
    for (int i = 0; i < NBLOCKS * BLOCK; i++) input[i] = (unsigned char)((i / 7) % 5 + 'a');
    pthread_t t[NWORKERS];
    for (int i = 0; i < NWORKERS; i++) pthread_create(&t[i], 0, worker, 0);
    pthread_mutex_lock(&m);
    while (done_blocks < NBLOCKS) pthread_cond_wait(&finished, &m);
    pthread_mutex_unlock(&m);
    for (int i = 0; i < NWORKERS; i++) pthread_join(t[i], 0);
    long sum = 0;
    for (int b = 0; b < NBLOCKS; b++) sum += out_len[b];
    if (sum != total) { fprintf(stderr, "mismatch\n"); return 1; }
    printf("%ld\n", sum);
    return 0;
}
