// Signals every process it can name: the pid it is given, its parent, its process group.
// Under `irs verify` none of them may be reached: the process given (the test's sentinel), the
// verifier and the test harness must all survive.
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <unistd.h>

int hits;

static void *t(void *arg) {
  hits++;
  return arg;
}

int main(int argc, char **argv) {
  pid_t sentinel = argc > 1 ? (pid_t)atoi(argv[1]) : 0;
  signal(SIGUSR1, SIG_IGN);
  pthread_t th;
  pthread_create(&th, 0, t, 0);
  if (sentinel > 0) kill(sentinel, SIGKILL);
  kill(getppid(), SIGTERM);
  kill(0, SIGUSR1);
  hits++;
  pthread_join(th, 0);
  return 0;
}
