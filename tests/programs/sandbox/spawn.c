// Starts a shell command that creates a file. Process creation is refused by name in explored
// executions: the verdict names the call and the file is never created.
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

int x;

static void *t(void *arg) {
  x++;
  return arg;
}

int main(int argc, char **argv) {
  char cmd[512];
  snprintf(cmd, sizeof cmd, "touch %s", argc > 1 ? argv[1] : "/tmp/irs-sandbox-spawned");
  pthread_t th;
  pthread_create(&th, 0, t, 0);
  int r = system(cmd);
  x++;
  pthread_join(th, 0);
  return r == 0 ? 0 : 1;
}
