/* GCC/Clang builtins on plain ints, two threads:
 *  - __sync_fetch_and_add on a shared counter (final value 2);
 *  - __sync_bool_compare_and_swap to claim an owner slot: exactly one winner;
 *  - __atomic_exchange_n to swap ids into a slot: exactly one thread sees the
 *    initial 0, the other sees the first thread's id, and the slot ends with
 *    the second thread's id;
 *  - __atomic_thread_fence release/acquire pairing around relaxed flag
 *    accesses: a thread that observes the flag also observes the plain data
 *    written before the release fence.
 * Expected: safe. */
#define _POSIX_C_SOURCE 200809L
#include <assert.h>
#include <pthread.h>
#include <stdio.h>

static int counter = 0;
static int owner = 0;
static int wins = 0;
static int slot = 0;
static int got[3]; /* indexed by id 1..2 */
static int data = 0;
static int flag = 0;

static void *thr(void *arg) {
  int id = *(int *)arg; /* 1 or 2 */

  __sync_fetch_and_add(&counter, 1);

  if (__sync_bool_compare_and_swap(&owner, 0, id))
    __sync_fetch_and_add(&wins, 1);

  got[id] = __atomic_exchange_n(&slot, id, __ATOMIC_SEQ_CST);

  if (id == 1) {
    data = 42;
    __atomic_thread_fence(__ATOMIC_RELEASE);
    __atomic_store_n(&flag, 1, __ATOMIC_RELAXED);
  } else {
    if (__atomic_load_n(&flag, __ATOMIC_RELAXED)) {
      __atomic_thread_fence(__ATOMIC_ACQUIRE);
      assert(data == 42);
    }
  }
  return NULL;
}

int main(void) {
  pthread_t t1, t2;
  int id1 = 1, id2 = 2;
  pthread_create(&t1, NULL, thr, &id1);
  pthread_create(&t2, NULL, thr, &id2);
  pthread_join(t1, NULL);
  pthread_join(t2, NULL);
  assert(counter == 2);
  assert(wins == 1);
  assert(owner == 1 || owner == 2);
  assert((got[1] == 0 && got[2] == 1 && slot == 2) ||
         (got[2] == 0 && got[1] == 2 && slot == 1));
  assert(data == 42 && flag == 1);
  printf("atomic_safe_builtins: ok owner=%d slot=%d\n", owner, slot);
  return 0;
}
