/* Nested creation: main creates T1, T1 creates and joins T2; after joining T1 main creates T3.
 * Only one creator is active at a time, so the numbering is deterministic. */
#include <pthread.h>
#include <stdio.h>

int seen[3];

static void *grandchild(void *arg) {
    (void)arg;
    seen[2] += 2;
    return NULL;
}

static void *child(void *arg) {
    pthread_t t;
    (void)arg;
    seen[1] = 1;
    pthread_create(&t, NULL, grandchild, NULL);
    pthread_join(t, NULL);
    seen[1] += seen[2];
    return NULL;
}

int main(void) {
    pthread_t a, b;
    seen[0] = 5;
    pthread_create(&a, NULL, child, NULL);
    pthread_join(a, NULL);
    pthread_create(&b, NULL, grandchild, NULL);
    pthread_join(b, NULL);
    printf("%d %d %d\n", seen[0], seen[1], seen[2]);
    return 0;
}
