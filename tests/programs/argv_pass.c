/* argv passthrough: main prints argv[1..]; a thread counts the arguments through the argv
 * pointer it receives. argv's strings and pointer array are not globals: objects `-`. */
#include <pthread.h>
#include <stdio.h>

int nargs;

static void *count_args(void *arg) {
    char **av = arg;
    for (int i = 1; av[i] != NULL; i++)
        nargs++;
    return NULL;
}

int main(int argc, char **argv) {
    pthread_t t;
    for (int i = 1; i < argc; i++)
        printf("arg %d: %s\n", i, argv[i]);
    pthread_create(&t, NULL, count_args, argv);
    pthread_join(t, NULL);
    printf("%d args\n", nargs);
    return nargs == argc - 1 ? 0 : 1;
}
