// Two threads post one semaphore that main waits on twice: the posts commute (either order
// leaves the same count, and a post disables nothing), and each wait is one event, enabled
// only while the count is above 0, so a wait that comes before a post is no separate trace.
// Traces (hand count): each post P1, P2 is on its thread's copy of the semaphore; main's waits
// W1 < W2 are on the semaphore and every copy. W1 needs one post before it, W2 both. The
// traces are the sets of posts before W1: {P1}, {P2} or {P1, P2} (not none: W1 needs one);
// the getvalue after W2 follows everything. 3.
// With every operation on the semaphore dependent (Mazurkiewicz: no copies), P1 and P2 are
// ordered too: the orders of P1, P2, W1 with W1 after at least one post, and W2 after both:
// P1 P2 W1, P2 P1 W1, P1 W1 P2, P2 W1 P1: 4.
// expect-traces: 4
// expect-traces-reads-commute: 3
// expect-bugs: none
#include <assert.h>
#include <pthread.h>
#include <semaphore.h>
sem_t s;
void *poster(void *a) {
  sem_post(&s);
  return a;
}
int main(void) {
  sem_init(&s, 0, 0);
  pthread_t a, b;
  pthread_create(&a, 0, poster, 0);
  pthread_create(&b, 0, poster, 0);
  sem_wait(&s);
  sem_wait(&s);
  int v = -1;
  sem_getvalue(&s, &v);
  assert(v == 0);
  pthread_join(a, 0);
  pthread_join(b, 0);
  return 0;
}
