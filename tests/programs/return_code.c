/* The exit status is main's return value, computed by two threads under a mutex. */
#include <pthread.h>
#include <stdio.h>

pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
int code = 1;

static void *add(void *arg) {
    int k = (int)(long)arg;
    pthread_mutex_lock(&m);
    code += k;
    pthread_mutex_unlock(&m);
    return NULL;
}

int main(void) {
    pthread_t t1, t2;
    pthread_create(&t1, NULL, add, (void *)2L);
    pthread_create(&t2, NULL, add, (void *)4L);
    pthread_join(t1, NULL);
    pthread_join(t2, NULL);
    printf("returning %d\n", code);
    return code;
}
