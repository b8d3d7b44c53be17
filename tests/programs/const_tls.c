/* A const global table and a const global struct (constant globals; a const scalar would be
 * folded by clang and have no access at all) and a _Thread_local counter: all their accesses
 * are skipped. Only the mutex-protected global total is shared. */
#include <pthread.h>
#include <stdio.h>

const int table[4] = {2, 3, 5, 7};
struct cfg {
    int n;
    int scale;
};
const struct cfg cfg = {4, 3};
_Thread_local int tls_count;
int total;
pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;

static void *worker(void *arg) {
    (void)arg;
    for (int i = 0; i < cfg.n; i++)
        tls_count += table[i] * cfg.scale;
    pthread_mutex_lock(&m);
    total += tls_count;
    pthread_mutex_unlock(&m);
    return NULL;
}

int main(void) {
    pthread_t t1, t2;
    tls_count = 1;
    pthread_create(&t1, NULL, worker, NULL);
    pthread_create(&t2, NULL, worker, NULL);
    pthread_join(t1, NULL);
    pthread_join(t2, NULL);
    printf("%d %d %d\n", total, tls_count, table[3]);
    return 0;
}
