/* Global arrays and struct fields at non-zero offsets, including an access to a global
 * through a pointer passed as the thread argument (still named after the global). */
#include <pthread.h>
#include <stdio.h>

struct rec {
    int id;        /* offset 0 */
    char tag;      /* offset 4 */
    long value;    /* offset 8 */
    short pair[2]; /* offsets 16, 18 */
};                 /* size 24 */

int arr[4];
struct rec rec;
struct rec recs[2];

static void *worker(void *arg) {
    long *vp = arg; /* points at rec.value */
    for (int i = 0; i < 4; i++)
        arr[i] = i * 10;
    rec.id = 7;
    rec.tag = 'x';
    *vp = 100;
    rec.pair[1] = 3;
    recs[1].value = arr[2] + rec.pair[1];
    return NULL;
}

int main(void) {
    pthread_t t;
    pthread_create(&t, NULL, worker, &rec.value);
    pthread_join(t, NULL);
    printf("%d %d %c %ld %d %ld\n", arr[3], rec.id, rec.tag, rec.value, rec.pair[1], recs[1].value);
    return 0;
}
