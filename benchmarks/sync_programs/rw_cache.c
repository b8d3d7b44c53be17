/*
 * rw_cache -- a cache entry of two fields (a version and the value computed for it) behind a
 * pthread_rwlock: READERS reader threads look it up READS times each under the read lock; one
 * writer thread refreshes it UPDATES times under the write lock (version v gets value v*10+7).
 *
 * Build with -DREADERS=<R> (default 2), -DREADS=<per reader> (default 1), -DUPDATES=<U>
 * (default 2).
 *
 * Checked: every lookup sees a consistent entry (value == version*10+7) and, per reader,
 * versions that never go back; at the end the entry holds the last version.
 *
 * -DBUG: the writer takes the read lock instead of the write lock (a copy-paste slip), so a
 * reader can look up the entry between the writer's two stores and see a torn entry.
 */
#include <assert.h>
#include <pthread.h>
#include <stdio.h>

#ifndef READERS
#define READERS 2
#endif
#ifndef READS
#define READS 1
#endif
#ifndef UPDATES
#define UPDATES 2
#endif
#if READERS < 1 || READS < 1 || UPDATES < 1
#error "need READERS, READS, UPDATES >= 1"
#endif

#ifdef BUG
#define WRITE_LOCK pthread_rwlock_rdlock
#else
#define WRITE_LOCK pthread_rwlock_wrlock
#endif

struct entry {
    int version;
    int value;
};

static pthread_rwlock_t lock;
static struct entry cache = {0, 7};
static int seen_max[READERS];

static void *reader(void *arg) {
    int r = (int)(long)arg;
    int last = 0;
    for (int i = 0; i < READS; i++) {
        pthread_rwlock_rdlock(&lock);
        int version = cache.version, value = cache.value;
        pthread_rwlock_unlock(&lock);
        assert(value == version * 10 + 7 && "torn cache entry");
        assert(version >= last && "version went back");
        last = version;
    }
    seen_max[r] = last;
    return NULL;
}

static void *writer(void *arg) {
    (void)arg;
    for (int v = 1; v <= UPDATES; v++) {
        WRITE_LOCK(&lock);
        cache.version = v;
        cache.value = v * 10 + 7;
        pthread_rwlock_unlock(&lock);
    }
    return NULL;
}

int main(void) {
    pthread_t rd[READERS], wr;
    pthread_rwlock_init(&lock, NULL);
    pthread_create(&wr, NULL, writer, NULL);
    for (long r = 0; r < READERS; r++)
        pthread_create(&rd[r], NULL, reader, (void *)r);
    pthread_join(wr, NULL);
    for (int r = 0; r < READERS; r++)
        pthread_join(rd[r], NULL);
    assert(cache.version == UPDATES && cache.value == UPDATES * 10 + 7);
    int newest = 0;
    for (int r = 0; r < READERS; r++)
        newest = seen_max[r] > newest ? seen_max[r] : newest;
    printf("rw_cache: %d readers x %d lookups, %d updates, final version %d (readers saw up to %d): ok\n", READERS,
           READS, UPDATES, cache.version, newest);
    return 0;
}
