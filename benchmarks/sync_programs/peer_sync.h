/*
 * peer_sync.h -- stand-ins for the POSIX primitives a peer model checker does not model, used
 * ONLY for the peers' "shim" runs in benchmarks/sync_programs/run.py; irs and the plain builds
 * never see this file.
 *
 * GenMC v0.10.3 models mutexes, barriers and C11 atomics, but not condition variables, rwlocks
 * or semaphores (its pthread.h has them commented out; a program using them does not compile,
 * and an unmodelled sem_wait is called for real and blocks the interpreter). Nidhugg models
 * mutexes, condition variables and atomics, but treats rwlocks, semaphores and barriers as
 * unknown external functions that it calls as black boxes (no synchronisation at all, or a real
 * call that blocks for good). So run.py can force-include this header (clang -include) with
 * the SHIM_* macros of the primitives the peer lacks:
 *
 *   -DSHIM_COND     pthread_cond_*      a sequence number; wait = read it, unlock, spin until
 *                                       it changes, relock; signal and broadcast both bump it
 *                                       (so a signal may wake every waiter: a spurious wake-up,
 *                                       which POSIX allows and irs does not explore)
 *   -DSHIM_RWLOCK   pthread_rwlock_*    a writer flag and a reader count, tested and taken
 *                                       under a mutex; a locker that cannot enter spins until
 *                                       they change, then retries (readers preferred)
 *   -DSHIM_SEM      sem_*               an atomic count: await > 0, then compare_exchange down
 *   -DSHIM_BARRIER  pthread_barrier_*   a mutex-protected arrival count and an atomic
 *                                       generation that the last arrival bumps; the others spin
 *                                       until it changes
 *
 * Every wait is a side-effect-free spin loop on an atomic load (`while (load(x) == v);`), the
 * shape both peers turn into an assume (GenMC's spin-assume, Nidhugg's loop-purity pass), so a
 * waiter that is never woken ends in a blocked execution, not in an endless exploration. The
 * semantics are those of the primitives under sequential consistency, except that a signal may
 * wake more than one waiter. Trace counts with the stand-ins are not comparable to anybody's
 * counts on the native primitives.
 */
#ifndef PEER_SYNC_H
#define PEER_SYNC_H

#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#ifdef SHIM_SEM
#include <semaphore.h>
#endif

#ifdef SHIM_COND
typedef struct { atomic_int seq; } shim_cond_t;
static inline int shim_cond_init(shim_cond_t *c, const void *attr) {
    (void)attr;
    atomic_init(&c->seq, 0);
    return 0;
}
static inline int shim_cond_wait(shim_cond_t *c, pthread_mutex_t *m) {
    int s = atomic_load(&c->seq);
    pthread_mutex_unlock(m);
    while (atomic_load(&c->seq) == s)
        ;
    pthread_mutex_lock(m);
    return 0;
}
static inline int shim_cond_signal(shim_cond_t *c) {
    atomic_fetch_add(&c->seq, 1);
    return 0;
}
static inline int shim_cond_destroy(shim_cond_t *c) {
    (void)c;
    return 0;
}
#define pthread_cond_t shim_cond_t
#define pthread_cond_init shim_cond_init
#define pthread_cond_wait shim_cond_wait
#define pthread_cond_signal shim_cond_signal
#define pthread_cond_broadcast shim_cond_signal
#define pthread_cond_destroy shim_cond_destroy
#endif

#ifdef SHIM_RWLOCK
typedef struct {
    pthread_mutex_t m;
    atomic_int writer, readers;
} shim_rwlock_t;
static inline int shim_rwlock_init(shim_rwlock_t *l, const void *attr) {
    (void)attr;
    pthread_mutex_init(&l->m, NULL);
    atomic_init(&l->writer, 0);
    atomic_init(&l->readers, 0);
    return 0;
}
static inline int shim_rwlock_rdlock(shim_rwlock_t *l) {
    for (;;) {
        pthread_mutex_lock(&l->m);
        if (!atomic_load(&l->writer)) {
            atomic_fetch_add(&l->readers, 1);
            pthread_mutex_unlock(&l->m);
            return 0;
        }
        pthread_mutex_unlock(&l->m);
        while (atomic_load(&l->writer))
            ;
    }
}
static inline int shim_rwlock_wrlock(shim_rwlock_t *l) {
    for (;;) {
        pthread_mutex_lock(&l->m);
        if (!atomic_load(&l->writer) && atomic_load(&l->readers) == 0) {
            atomic_store(&l->writer, 1);
            pthread_mutex_unlock(&l->m);
            return 0;
        }
        pthread_mutex_unlock(&l->m);
        while (atomic_load(&l->writer) || atomic_load(&l->readers))
            ;
    }
}
static inline int shim_rwlock_unlock(shim_rwlock_t *l) {
    if (atomic_load(&l->writer))
        atomic_store(&l->writer, 0);
    else
        atomic_fetch_sub(&l->readers, 1);
    return 0;
}
static inline int shim_rwlock_destroy(shim_rwlock_t *l) {
    pthread_mutex_destroy(&l->m);
    return 0;
}
#define pthread_rwlock_t shim_rwlock_t
#define pthread_rwlock_init shim_rwlock_init
#define pthread_rwlock_rdlock shim_rwlock_rdlock
#define pthread_rwlock_wrlock shim_rwlock_wrlock
#define pthread_rwlock_unlock shim_rwlock_unlock
#define pthread_rwlock_destroy shim_rwlock_destroy
#endif

#ifdef SHIM_SEM
typedef struct { atomic_int count; } shim_sem_t;
static inline int shim_sem_init(shim_sem_t *s, int pshared, unsigned value) {
    (void)pshared;
    atomic_init(&s->count, (int)value);
    return 0;
}
static inline int shim_sem_wait(shim_sem_t *s) {
    for (;;) {
        while (atomic_load(&s->count) == 0)
            ;
        int c = atomic_load(&s->count);
        if (c > 0 && atomic_compare_exchange_strong(&s->count, &c, c - 1))
            return 0;
    }
}
static inline int shim_sem_post(shim_sem_t *s) {
    atomic_fetch_add(&s->count, 1);
    return 0;
}
static inline int shim_sem_destroy(shim_sem_t *s) {
    (void)s;
    return 0;
}
#define sem_t shim_sem_t
#define sem_init shim_sem_init
#define sem_wait shim_sem_wait
#define sem_post shim_sem_post
#define sem_destroy shim_sem_destroy
#endif

#ifdef SHIM_BARRIER
#ifndef PTHREAD_BARRIER_SERIAL_THREAD
#define PTHREAD_BARRIER_SERIAL_THREAD (-1)
#endif
typedef struct {
    pthread_mutex_t m;
    int count, arrived;
    atomic_int generation;
} shim_barrier_t;
static inline int shim_barrier_init(shim_barrier_t *b, const void *attr, unsigned count) {
    (void)attr;
    pthread_mutex_init(&b->m, NULL);
    b->count = (int)count;
    b->arrived = 0;
    atomic_init(&b->generation, 0);
    return 0;
}
static inline int shim_barrier_wait(shim_barrier_t *b) {
    pthread_mutex_lock(&b->m);
    int g = atomic_load(&b->generation);
    if (++b->arrived == b->count) {
        b->arrived = 0;
        atomic_store(&b->generation, g + 1);
        pthread_mutex_unlock(&b->m);
        return PTHREAD_BARRIER_SERIAL_THREAD;
    }
    pthread_mutex_unlock(&b->m);
    while (atomic_load(&b->generation) == g)
        ;
    return 0;
}
static inline int shim_barrier_destroy(shim_barrier_t *b) {
    pthread_mutex_destroy(&b->m);
    return 0;
}
#define pthread_barrier_t shim_barrier_t
#define pthread_barrier_init shim_barrier_init
#define pthread_barrier_wait shim_barrier_wait
#define pthread_barrier_destroy shim_barrier_destroy
#endif

#endif /* PEER_SYNC_H */
