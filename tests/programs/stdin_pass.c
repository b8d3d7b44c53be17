/* stdin passthrough: main reads a line with fgets (a load of the external global `stdin`),
 * a thread upper-cases it in place, main echoes it. */
#include <pthread.h>
#include <stdio.h>
#include <string.h>

char line[32];
int len;

static void *upcase(void *arg) {
    (void)arg;
    for (int i = 0; i < len; i++)
        if (line[i] >= 'a' && line[i] <= 'z')
            line[i] = line[i] - 'a' + 'A';
    return NULL;
}

int main(void) {
    pthread_t t;
    if (fgets(line, sizeof line, stdin) == NULL)
        return 1;
    line[strcspn(line, "\n")] = '\0';
    len = (int)strlen(line);
    pthread_create(&t, NULL, upcase, NULL);
    pthread_join(t, NULL);
    printf("[%s] %d\n", line, len);
    return 0;
}
