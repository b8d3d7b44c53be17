// A thread and main change the file system around them: create, append, rename, write outside
// the working directory; unlink, make a directory and change into it (after the writer ended:
// the working directory is the whole process's). A second thread races with the writer. Every execution checks
// first that it starts from the directory as the test laid it out: under `irs verify` each
// execution must see a fresh view, and the real directory must be left as it was.
#include <assert.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static const char *outside;
int turns;

static int exists(const char *p) { return access(p, F_OK) == 0; }

static void *writer(void *arg) {
  FILE *f = fopen("made.txt", "w");
  assert(f);
  fprintf(f, "made\n");
  fclose(f);
  f = fopen("keep.txt", "a");
  assert(f);
  fprintf(f, "appended\n");
  fclose(f);
  assert(rename("move_me.txt", "moved.txt") == 0);
  f = fopen(outside, "w");
  if (f) fclose(f);
  turns++;
  return arg;
}

static void *counter(void *arg) {
  turns++;
  return arg;
}

static void move_around(void) {
  assert(unlink("delete_me.txt") == 0);
  assert(mkdir("made_dir", 0755) == 0);
  assert(chdir("made_dir") == 0);
  FILE *f = fopen("inner.txt", "w");
  assert(f);
  fclose(f);
}

int main(int argc, char **argv) {
  outside = argc > 1 ? argv[1] : "/tmp/irs-sandbox-outside";
  // The state every execution must start from.
  char buf[64] = {0};
  FILE *k = fopen("keep.txt", "r");
  assert(k);
  size_t n = fread(buf, 1, sizeof buf - 1, k);
  fclose(k);
  assert(n == 5 && strcmp(buf, "keep\n") == 0);
  assert(!exists("made.txt") && !exists("made_dir") && !exists("moved.txt"));
  assert(exists("move_me.txt") && exists("delete_me.txt"));
  assert(!exists(outside));
  pthread_t a, b;
  pthread_create(&a, 0, writer, 0);
  pthread_create(&b, 0, counter, 0);
  pthread_join(a, 0);
  move_around();
  pthread_join(b, 0);
  assert(turns == 2 || turns == 1);
  return 0;
}
