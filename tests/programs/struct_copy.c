/* Struct assignment is a memcpy in the IR: a load of the source and a store of the
 * destination, each only when that side is instrumented. Also memset on heap memory and
 * memmove inside a global array. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct pair {
    int a;  /* offset 0 */
    int b;  /* offset 4 */
    long c; /* offset 8 */
};          /* size 16 */

struct pair g_src = {1, 2, 3};
struct pair g_dst;
struct pair g_arr[2];

static void *worker(void *arg) {
    struct pair *heap = arg;
    struct pair tmp;
    g_dst = g_src;     /* global -> global */
    tmp = g_dst;       /* global -> non-escaping local */
    tmp.b = 20;
    g_arr[1] = tmp;    /* non-escaping local -> global element */
    *heap = g_arr[1];  /* global element -> heap */
    return NULL;
}

int main(void) {
    pthread_t t;
    struct pair *h = malloc(sizeof *h);
    if (h == NULL)
        return 1;
    memset(h, 0, sizeof *h);
    pthread_create(&t, NULL, worker, h);
    pthread_join(t, NULL);
    memmove(&g_arr[0], &g_arr[1], sizeof g_arr[0]);
    printf("%d %d %ld\n", g_dst.a, g_arr[0].b, h->c);
    free(h);
    return 0;
}
