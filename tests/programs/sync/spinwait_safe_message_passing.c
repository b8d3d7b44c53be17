/* Message passing: the sender writes plain data and then sets an atomic
 * (seq_cst) flag; the receiver spins until it sees the flag and then reads
 * the data. The spin loop is unbounded but terminates in every fair
 * schedule, because the sender always sets the flag.
 * Expected: safe (terminates under fair scheduling). */
#define _POSIX_C_SOURCE 200809L
#include <assert.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>

static int data = 0;
static atomic_int flag = 0;

static void *sender(void *arg) {
  (void)arg;
  data = 42;
  atomic_store(&flag, 1);
  return NULL;
}

static void *receiver(void *arg) {
  (void)arg;
  while (!atomic_load(&flag))
    ;
  assert(data == 42);
  return NULL;
}

int main(void) {
  pthread_t s, r;
  pthread_create(&r, NULL, receiver, NULL);
  pthread_create(&s, NULL, sender, NULL);
  pthread_join(r, NULL);
  pthread_join(s, NULL);
  printf("spinwait_safe_message_passing: ok data=%d\n", data);
  return 0;
}
