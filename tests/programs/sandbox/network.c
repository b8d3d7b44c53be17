// Connects to a TCP port on 127.0.0.1 given as argument (the test listens there, outside)
// through the system call itself, past irs's refusal of `socket` by name. Under `irs verify` the
// connection must not arrive: the executions have a network of their own. Its own loopback
// works: it listens on 127.0.0.1 and connects to itself.
#include <arpa/inet.h>
#include <assert.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>

int tries;

static int tcp(void) { return (int)syscall(SYS_socket, AF_INET, SOCK_STREAM, 0); }

static void *t(void *arg) {
  tries++;
  return arg;
}

int main(int argc, char **argv) {
  int port = argc > 1 ? atoi(argv[1]) : 0;
  pthread_t th;
  pthread_create(&th, 0, t, 0);
  struct sockaddr_in a;
  memset(&a, 0, sizeof a);
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  a.sin_port = htons((unsigned short)port);
  int s = tcp();
  assert(s >= 0);
  int outside = (int)syscall(SYS_connect, s, (struct sockaddr *)&a, sizeof a);
  close(s);
  // Our own loopback: listen on an ephemeral port and connect to it.
  int l = tcp();
  struct sockaddr_in me;
  memset(&me, 0, sizeof me);
  me.sin_family = AF_INET;
  me.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof me;
  assert(syscall(SYS_bind, l, (struct sockaddr *)&me, sizeof me) == 0);
  assert(syscall(SYS_listen, l, 1) == 0);
  assert(syscall(SYS_getsockname, l, (struct sockaddr *)&me, &len) == 0);
  int c = tcp();
  assert(syscall(SYS_connect, c, (struct sockaddr *)&me, sizeof me) == 0);
  close(c);
  close(l);
  tries++;
  pthread_join(th, 0);
  return outside == 0 ? 3 : 0;
}
