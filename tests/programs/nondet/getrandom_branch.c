// A random bit, not the schedule, picks x or y: two runs of one schedule may differ.
#include <pthread.h>
#include <sys/random.h>
int x, y;
void *t(void *a) {
  unsigned char c = 0;
  if (getrandom(&c, 1, 0) != 1) c = 0; // not open: a file opened by name is input
  if (c % 2) x = 1; else y = 1;
  return 0;
}
int main(void) { pthread_t a; pthread_create(&a, 0, t, 0); x = 2; y = 2; pthread_join(a, 0); return 0; }
