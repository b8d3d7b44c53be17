/* Non-escaping locals (arrays, scalars, a string buffer handed only to the str and mem
 * functions): none of their accesses are events; only the global result is. */
#include <pthread.h>
#include <stdio.h>
#include <string.h>

int result;

static void *worker(void *arg) {
    int buf[4];
    int acc = 0;
    (void)arg;
    memset(buf, 0, sizeof buf);
    for (int i = 0; i < 4; i++)
        buf[i] = i * i;
    for (int i = 0; i < 4; i++)
        acc += buf[i];
    result = acc;
    return NULL;
}

int main(void) {
    pthread_t t;
    int local[3] = {1, 2, 3};
    char name[8];
    int s = 0;
    strcpy(name, "abc");
    for (int i = 0; i < 3; i++)
        s += local[i];
    s += (int)strlen(name);
    pthread_create(&t, NULL, worker, NULL);
    pthread_join(t, NULL);
    printf("%d %d %s\n", result, s, name);
    return 0;
}
