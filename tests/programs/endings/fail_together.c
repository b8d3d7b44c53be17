/* Several threads fail an assertion at the same moment: each one's abort reaches the runtime
 * while the others are writing the recorded trace. */
#include <assert.h>
#include <pthread.h>
#include <stdatomic.h>

#define THREADS 4
static atomic_int ready;

static void *fail(void *arg) {
    atomic_fetch_add(&ready, 1);
    while (atomic_load(&ready) < THREADS)
        ;
    assert(arg == 0 && "every thread fails");
    return arg;
}

int main(void) {
    pthread_t t[THREADS];
    for (long i = 0; i < THREADS; i++)
        pthread_create(&t[i], 0, fail, (void *)(i + 1));
    for (int i = 0; i < THREADS; i++)
        pthread_join(t[i], 0);
    return 0;
}
