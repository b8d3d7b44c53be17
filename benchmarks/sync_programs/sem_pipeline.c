/*
 * sem_pipeline -- a two-stage pipeline joined by a bounded channel with counting semaphores:
 * `slots` (free slots, initially SLOTS) and `items` (filled slots, initially 0). Stage 1
 * computes ITEMS items (the squares 1, 4, 9, ...) and sends each: sem_wait(slots), write the
 * slot, sem_post(items). Stage 2 receives each: sem_wait(items), read the slot,
 * sem_post(slots); it adds one to each item and stores it in order. main starts both stages,
 * joins them and checks the output.
 *
 * Build with -DITEMS=<N> (default 3), -DSLOTS=<channel capacity> (default 1).
 *
 * Checked: stage 2 receives the items in the order sent, and main finds out[i] = (i+1)^2 + 1.
 *
 * -DBUG: stage 2 frees the slot (sem_post(slots)) before it has read it, so stage 1 can
 * overwrite the slot with the next item first: an item is lost and another one seen twice.
 */
#include <assert.h>
#include <pthread.h>
#include <semaphore.h>
#include <stdio.h>

#ifndef ITEMS
#define ITEMS 3
#endif
#ifndef SLOTS
#define SLOTS 1
#endif
#if ITEMS < 1 || SLOTS < 1
#error "need ITEMS, SLOTS >= 1"
#endif

static sem_t slots, items;
static int channel[SLOTS];
static int out[ITEMS];

static void *stage1(void *arg) {
    (void)arg;
    for (int i = 0; i < ITEMS; i++) {
        int x = (i + 1) * (i + 1);
        sem_wait(&slots);
        channel[i % SLOTS] = x;
        sem_post(&items);
    }
    return NULL;
}

static void *stage2(void *arg) {
    (void)arg;
    for (int i = 0; i < ITEMS; i++) {
        sem_wait(&items);
#ifdef BUG
        sem_post(&slots);
        int x = channel[i % SLOTS];
#else
        int x = channel[i % SLOTS];
        sem_post(&slots);
#endif
        assert(x == (i + 1) * (i + 1) && "stage 2 received an item out of order");
        out[i] = x + 1;
    }
    return NULL;
}

int main(void) {
    pthread_t s1, s2;
    sem_init(&slots, 0, SLOTS);
    sem_init(&items, 0, 0);
    pthread_create(&s1, NULL, stage1, NULL);
    pthread_create(&s2, NULL, stage2, NULL);
    pthread_join(s1, NULL);
    pthread_join(s2, NULL);
    long sum = 0;
    for (int i = 0; i < ITEMS; i++) {
        assert(out[i] == (i + 1) * (i + 1) + 1);
        sum += out[i];
    }
    sem_destroy(&slots);
    sem_destroy(&items);
    printf("sem_pipeline: %d items through %d slot(s), sum %ld: ok\n", ITEMS, SLOTS, sum);
    return 0;
}
