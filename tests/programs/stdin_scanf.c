/* stdin through scanf into a local: scanf does not make `n` escape, so its accesses are
 * skipped; the value reaches a thread through a global and comes back as the exit status. */
#include <pthread.h>
#include <stdio.h>

int input;
int doubled;

static void *twice(void *arg) {
    (void)arg;
    doubled = input * 2;
    return NULL;
}

int main(void) {
    pthread_t t;
    int n = 0;
    if (scanf("%d", &n) != 1)
        return 1;
    input = n;
    pthread_create(&t, NULL, twice, NULL);
    pthread_join(t, NULL);
    printf("%d doubled is %d\n", n, doubled);
    return doubled % 256;
}
