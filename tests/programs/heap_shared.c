/* A malloc'd job (and a buffer it points to) shared with a thread through the thread
 * argument, plus a heap buffer reached through a global pointer. Heap objects print as `-`;
 * the pointer variables themselves are a non-escaping local (skipped) and a global. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

struct job {
    int *data;
    int n;
    int sum;
};

char *gbuf;

static void *worker(void *arg) {
    struct job *j = arg;
    int s = 0;
    for (int i = 0; i < j->n; i++)
        s += j->data[i];
    j->sum = s;
    j->data[0] = -1;
    gbuf[1] = 'x';
    return NULL;
}

int main(void) {
    pthread_t t;
    struct job *j = malloc(sizeof *j);
    if (j == NULL)
        return 1;
    j->data = malloc(3 * sizeof(int));
    j->n = 3;
    for (int i = 0; i < 3; i++)
        j->data[i] = i + 1;
    gbuf = malloc(4);
    pthread_create(&t, NULL, worker, j);
    pthread_join(t, NULL);
    printf("%d %d %c\n", j->sum, j->data[0], gbuf[1]);
    free(j->data);
    free(j);
    free(gbuf);
    return 0;
}
