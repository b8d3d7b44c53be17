/* Two identical threads increment shared counters under mutexes: a global mutex and a mutex
 * that is a field (at offset 8) of a global struct. Each thread's own sequence is fixed. */
#include <pthread.h>
#include <stdio.h>

struct stats {
    int hits;            /* offset 0 */
    pthread_mutex_t lk;  /* offset 8 */
};

pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
int counter;
struct stats stats = {0, PTHREAD_MUTEX_INITIALIZER};

static void *worker(void *arg) {
    (void)arg;
    for (int i = 0; i < 2; i++) {
        pthread_mutex_lock(&m);
        counter++;
        pthread_mutex_unlock(&m);
    }
    pthread_mutex_lock(&stats.lk);
    stats.hits += 10;
    pthread_mutex_unlock(&stats.lk);
    return NULL;
}

int main(void) {
    pthread_t t1, t2;
    pthread_create(&t1, NULL, worker, NULL);
    pthread_create(&t2, NULL, worker, NULL);
    pthread_join(t1, NULL);
    pthread_join(t2, NULL);
    printf("%d %d\n", counter, stats.hits);
    return 0;
}
