/*
 * mpc -- multiple producers, multiple consumers (MPC(P, C)), our own program with the
 * structure the QPOR paper describes for its multiple-producer multiple-consumer benchmark
 * (Table 1: MPC(2,5) .. MPC(5,5), with SSB executions for k = 1, 2 and 3 and optimality only
 * at k = 4 on the largest instance).
 *
 * Build with -DPRODUCERS=<P> (default 2) -DCONSUMERS=<C> (default 3) -DITEMS=<per producer>
 * (default 2); P + C <= 63.
 *
 * A ring of slots, each with its own mutex and state (EMPTY, FULL, TAKEN, ABANDONED), and
 * two reservation counters: in (under pm) and out (under cm). No condition variables and no
 * waiting: a consumer that finds its slot not yet filled abandons it, and the producer that
 * later comes to fill it keeps the item (main drains what is left at the end).
 *
 *   producer p, ITEMS times:  lock pm; s = in++; unlock pm;
 *                             lock slot[s]; EMPTY -> FULL (store the item), or
 *                             ABANDONED -> keep the item; unlock slot[s]
 *   consumer c, once:         lock cm; s = out++; unlock cm;
 *                             lock slot[s]; FULL -> TAKEN (consume the item), or
 *                             EMPTY -> ABANDONED; unlock slot[s]
 *
 * Every shared variable is accessed under one mutex, so a trace is fixed by the order of
 * critical sections per mutex: which producer gets which reservation on pm
 * ((P*ITEMS)! / ITEMS!^P ways: each producer's own reservations are in program order), which
 * consumer gets which on cm (C! ways), and for every slot reserved by both a producer and a
 * consumer, who comes first on it (2 ways; min(P*ITEMS, C) such slots). All combinations are
 * feasible, so
 *
 *   traces = (P*ITEMS)! / (ITEMS!)^P * C! * 2^min(P*ITEMS, C)
 *
 * ITEMS = 2, C = 3: P=1: 24, P=2: 288, P=3: 4,320, P=4: 120,960; C = 2: P=2: 48, P=3: 720,
 * P=4: 20,160; C = 5: P=1: 480, P=2: 11,520. The producer and the consumer that race on a slot
 * are decided by the races on pm and on cm, so races are entangled three deep.
 *
 * main creates the producers then the consumers, joins them and checks that every item is
 * accounted for exactly once (consumed, kept by its producer, or still in a FULL slot) and that
 * the sums match.
 */
#include <assert.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>

#ifndef PRODUCERS
#define PRODUCERS 2
#endif
#ifndef CONSUMERS
#define CONSUMERS 3
#endif
#ifndef ITEMS
#define ITEMS 2
#endif
#if PRODUCERS < 1 || CONSUMERS < 1 || ITEMS < 1 || PRODUCERS + CONSUMERS > 63
#error "need PRODUCERS, CONSUMERS, ITEMS >= 1 and PRODUCERS + CONSUMERS <= 63"
#endif

#define SLOTS (PRODUCERS * ITEMS + CONSUMERS)
enum { EMPTY, FULL, TAKEN, ABANDONED };

struct slot {
  pthread_mutex_t m;
  int state;
  int item;
};

static pthread_mutex_t pm = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t cm = PTHREAD_MUTEX_INITIALIZER;
static int in;  /* under pm: next slot for a producer */
static int out; /* under cm: next slot for a consumer */
static struct slot slot[SLOTS];
/* Written only by their own thread, read by main after the joins. */
static int kept[PRODUCERS], kept_sum[PRODUCERS];
static int got[CONSUMERS], got_sum[CONSUMERS];

static void *producer(void *arg) {
  int p = (int)(intptr_t)arg;
  int nkept = 0, sum = 0;
  for (int k = 0; k < ITEMS; k++) {
    int item = 1 + p * ITEMS + k; /* items 1 .. P*ITEMS, all distinct */
    pthread_mutex_lock(&pm);
    int s = in++;
    pthread_mutex_unlock(&pm);
    assert(s < SLOTS);
    pthread_mutex_lock(&slot[s].m);
    if (slot[s].state == EMPTY) {
      slot[s].item = item;
      slot[s].state = FULL;
    } else {
      assert(slot[s].state == ABANDONED);
      nkept++;
      sum += item;
    }
    pthread_mutex_unlock(&slot[s].m);
  }
  kept[p] = nkept;
  kept_sum[p] = sum;
  return 0;
}

static void *consumer(void *arg) {
  int c = (int)(intptr_t)arg;
  pthread_mutex_lock(&cm);
  int s = out++;
  pthread_mutex_unlock(&cm);
  assert(s < SLOTS);
  pthread_mutex_lock(&slot[s].m);
  if (slot[s].state == FULL) {
    got[c] = 1;
    got_sum[c] = slot[s].item;
    slot[s].state = TAKEN;
  } else {
    assert(slot[s].state == EMPTY);
    slot[s].state = ABANDONED;
  }
  pthread_mutex_unlock(&slot[s].m);
  return 0;
}

int main(void) {
  pthread_t p[PRODUCERS], c[CONSUMERS];
  for (int s = 0; s < SLOTS; s++) pthread_mutex_init(&slot[s].m, 0);
  for (int i = 0; i < PRODUCERS; i++) pthread_create(&p[i], 0, producer, (void *)(intptr_t)i);
  for (int i = 0; i < CONSUMERS; i++) pthread_create(&c[i], 0, consumer, (void *)(intptr_t)i);
  for (int i = 0; i < PRODUCERS; i++) pthread_join(p[i], 0);
  for (int i = 0; i < CONSUMERS; i++) pthread_join(c[i], 0);
  int n = 0, sum = 0, consumed = 0, nkept = 0, left = 0;
  for (int i = 0; i < PRODUCERS; i++) n += kept[i], sum += kept_sum[i], nkept += kept[i];
  for (int i = 0; i < CONSUMERS; i++) n += got[i], sum += got_sum[i], consumed += got[i];
  for (int s = 0; s < SLOTS; s++)
    if (slot[s].state == FULL) n++, sum += slot[s].item, left++; /* main drains the rest */
  const int total = PRODUCERS * ITEMS;
  assert(in == total && out == CONSUMERS);
  assert(n == total && sum == total * (total + 1) / 2);
  printf("consumed=%d kept=%d drained=%d\n", consumed, nkept, left);
  return 0;
}
