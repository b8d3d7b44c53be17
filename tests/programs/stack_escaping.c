/* Escaping stack: a local struct whose address is the thread argument and a local int whose
 * address is stored in a global pointer; their accesses are events on `-`. A local that
 * never escapes (plain) is skipped. */
#include <pthread.h>
#include <stdio.h>

struct pt {
    int x;
    int y;
};

int *gp;

static void *worker(void *arg) {
    struct pt *p = arg;
    p->x += 1;
    p->y = p->x * 2;
    *gp += p->y;
    return NULL;
}

int main(void) {
    pthread_t t;
    struct pt local;
    int plain = 4;
    int v;
    gp = &v;
    v = 3;
    local.x = plain;
    local.y = 0;
    pthread_create(&t, NULL, worker, &local);
    pthread_join(t, NULL);
    printf("%d %d %d %d\n", local.x, local.y, v, plain);
    return 0;
}
