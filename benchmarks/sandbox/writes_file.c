// Two threads; one writes a small file in the working directory in every execution, so every
// explored execution changes its view of the file system and the next one starts from a fresh
// view (the sandbox's worst case per execution).
#include <pthread.h>
#include <stdio.h>

int x;

static void *t(void *arg) {
  x++;
  return arg;
}

int main(void) {
  pthread_t a;
  pthread_create(&a, 0, t, 0);
  FILE *f = fopen("sandbox-bench-out.txt", "w");
  if (f) {
    fprintf(f, "%d\n", x);
    fclose(f);
  }
  x++;
  pthread_join(a, 0);
  return 0;
}
