/*
 * bounded_buffer -- the textbook bounded buffer: a ring of CAPACITY slots guarded by one mutex,
 * with two condition variables, not_full (producers wait on it) and not_empty (consumers wait
 * on it). Each producer p puts ITEMS items p*100+1, p*100+2, ...; the consumers take them all.
 *
 * Build with -DPRODUCERS=<P> (default 1), -DCONSUMERS=<C> (default 1), -DITEMS=<per producer>
 * (default 3), -DCAPACITY=<slots> (default 2). P*ITEMS must be a multiple of C.
 *
 * Checked: the sum of the items taken is the sum of the items put; every consumer sees each
 * producer's items in increasing order (the ring is FIFO); a consumer never takes from an
 * empty ring and a producer never puts into a full one.
 *
 * -DBUG: the waits are guarded by `if` instead of `while`, with 2 consumers and one producer
 * putting 2 items (unless PRODUCERS/CONSUMERS/ITEMS are given). A consumer woken by a signal
 * does not re-check the ring, and another consumer that did not wait can take the item first
 * (the "stolen wake-up"): the woken consumer then takes from an empty ring.
 *
 * -DPROBE_RESUMED: a probe of whether a tool explores every run, not a bug of the buffer. It
 * asserts what some runs of the correct program falsify: that a consumer never finds the ring
 * full after a producer that had to wait has put an item. Those runs are the ones in which the
 * woken producer relocks the mutex before the consumer's next critical section, whose signal
 * to not_full finds nobody waiting; a tool that orders a woken thread's relock after the
 * condition variable's last signal, rather than after the signal that woke it, never tries them
 * (expected verdict: violation).
 */
#include <assert.h>
#include <pthread.h>
#include <stdio.h>

#ifdef BUG
#define WAIT_WHILE if
#ifndef CONSUMERS
#define CONSUMERS 2
#endif
#ifndef ITEMS
#define ITEMS 2
#endif
#else
#define WAIT_WHILE while
#endif

#ifndef PRODUCERS
#define PRODUCERS 1
#endif
#ifndef CONSUMERS
#define CONSUMERS 1
#endif
#ifndef ITEMS
#define ITEMS 3
#endif
#ifndef CAPACITY
#define CAPACITY 2
#endif
#if PRODUCERS < 1 || CONSUMERS < 1 || ITEMS < 1 || CAPACITY < 1 || (PRODUCERS * ITEMS) % CONSUMERS != 0
#error "need PRODUCERS, CONSUMERS, ITEMS, CAPACITY >= 1 and PRODUCERS*ITEMS a multiple of CONSUMERS"
#endif

#define TOTAL (PRODUCERS * ITEMS)
#define PER_CONSUMER (TOTAL / CONSUMERS)

static pthread_mutex_t m;
static pthread_cond_t not_full, not_empty;
static int ring[CAPACITY];
static int head, tail, count; /* take at head, put at tail */
static long taken_sum[CONSUMERS];
#ifdef PROBE_RESUMED
static int resumed; /* a producer that had to wait has put an item */
#endif

static void put(int item) {
    pthread_mutex_lock(&m);
    int waited = 0;
    WAIT_WHILE (count == CAPACITY) {
        waited = 1;
        pthread_cond_wait(&not_full, &m);
    }
    assert(count < CAPACITY && "put into a full ring");
#ifdef PROBE_RESUMED
    if (waited)
        resumed = 1;
#else
    (void)waited;
#endif
    ring[tail] = item;
    tail = (tail + 1) % CAPACITY;
    count++;
    pthread_cond_signal(&not_empty);
    pthread_mutex_unlock(&m);
}

static int take(void) {
    pthread_mutex_lock(&m);
    WAIT_WHILE (count == 0)
        pthread_cond_wait(&not_empty, &m);
    assert(count > 0 && "take from an empty ring");
#ifdef PROBE_RESUMED
    assert(!(resumed && count == CAPACITY) && "probe: a consumer finds the ring full after a producer resumed");
#endif
    int item = ring[head];
    head = (head + 1) % CAPACITY;
    count--;
    pthread_cond_signal(&not_full);
    pthread_mutex_unlock(&m);
    return item;
}

static void *producer(void *arg) {
    int p = (int)(long)arg;
    for (int i = 1; i <= ITEMS; i++)
        put(p * 100 + i);
    return NULL;
}

static void *consumer(void *arg) {
    int c = (int)(long)arg;
    int last[PRODUCERS];
    for (int p = 0; p < PRODUCERS; p++)
        last[p] = 0;
    long sum = 0;
    for (int i = 0; i < PER_CONSUMER; i++) {
        int item = take();
        int p = item / 100, seq = item % 100;
        assert(p >= 0 && p < PRODUCERS && seq >= 1 && seq <= ITEMS);
        assert(seq > last[p] && "items of one producer out of order");
        last[p] = seq;
        sum += item;
    }
    taken_sum[c] = sum;
    return NULL;
}

int main(void) {
    pthread_t prod[PRODUCERS], cons[CONSUMERS];
    pthread_mutex_init(&m, NULL);
    pthread_cond_init(&not_full, NULL);
    pthread_cond_init(&not_empty, NULL);
    for (long c = 0; c < CONSUMERS; c++)
        pthread_create(&cons[c], NULL, consumer, (void *)c);
    for (long p = 0; p < PRODUCERS; p++)
        pthread_create(&prod[p], NULL, producer, (void *)p);
    for (int p = 0; p < PRODUCERS; p++)
        pthread_join(prod[p], NULL);
    for (int c = 0; c < CONSUMERS; c++)
        pthread_join(cons[c], NULL);
    long sum = 0, expected = 0;
    for (int c = 0; c < CONSUMERS; c++)
        sum += taken_sum[c];
    for (int p = 0; p < PRODUCERS; p++)
        for (int i = 1; i <= ITEMS; i++)
            expected += p * 100 + i;
    assert(sum == expected && count == 0);
    printf("bounded_buffer: %d producer(s), %d consumer(s), %d items, sum %ld: ok\n", PRODUCERS, CONSUMERS,
           TOTAL, sum);
    return 0;
}
