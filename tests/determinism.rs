//! No false verdict from a program's own deterministic behaviour (docs/src/explored-executions.md):
//! every explored execution starts from the same state (the arguments and environment as the
//! program may change them, the heap after a file opened first), sleeps cost no time in EXPLORE,
//! two runs that truly differ are named where they part, and a bug is a verdict only when its
//! schedule reproduces it. Real clang, real programs, `irs verify` as a user runs it.

mod common;

use common::*;
use std::path::{Path, PathBuf};
use std::process::Command;

fn build(dir: &Path, name: &str, src: &str) -> PathBuf {
    std::fs::write(dir.join(format!("{name}.c")), src).unwrap();
    let (out, c) = (name.to_string(), format!("{name}.c"));
    irs_cc(dir, &["-O0", "-g", "-o", &out, &c, "-lpthread"]).unwrap();
    dir.join(name)
}

fn verify(dir: &Path, opts: &[&str], prog: &Path, args: &[&str], env: &[(&str, &str)]) -> Output {
    let mut cmd = Command::new(irs());
    cmd.arg("verify").args(["--json", "--time-limit", "60"]).args(opts).arg("--out-dir").arg(dir).arg("--").arg(prog).args(args).current_dir(dir);
    for (k, v) in env {
        cmd.env(k, v);
    }
    run(&mut cmd, None, T).unwrap()
}

fn json(o: &Output) -> serde_json::Value {
    let last = o.stdout.lines().last().unwrap_or_default();
    serde_json::from_str(last).unwrap_or_else(|e| panic!("last line is not JSON ({e}): {}\nstderr: {}", o.stdout, o.stderr))
}

/// The verdict of a verification that must end with one (never "differ").
fn verdict(o: &Output) -> String {
    assert!(!o.stderr.contains("behaved differently"), "a false \"differ\": {}", o.stderr);
    json(o)["verdict"].as_str().unwrap().to_string()
}

/// The persistent worker, a process per execution, and snapshots wherever the exploration may
/// take them (a program this small takes none: `EDITS_ARGV_AFTER_A_PREFIX` runs from snapshots).
const WAYS: [&[&str]; 3] = [&[], &["--fork-each"], &["--snapshot-gap", "1"]];

/// Options it consumed are taken out of `argv` (`argv[i] = NULL`, as pigz does), after a
/// `strcmp` of every entry up to `--`: an execution that started from the `argv` an earlier one
/// left would crash in `strcmp`.
const EDITS_ARGV: &str = r#"
#include <pthread.h>
#include <stdio.h>
#include <string.h>
int x;
void *t(void *a) { x = 1; return 0; }
int main(int argc, char **argv) {
  int files = 0;
  for (int i = 1; i < argc; i++) {
    if (strcmp(argv[i], "--") == 0) break;
    if (argv[i][0] == '-') argv[i] = NULL;
  }
  for (int i = 1; i < argc; i++) if (argv[i] != NULL) files++;
  pthread_t th; pthread_create(&th, 0, t, 0);
  x = 2;
  pthread_join(th, 0);
  printf("%d files\n", files);
  return 0;
}
"#;

/// The same edits after an expensive prefix and 90 traces of three threads: the runs continue
/// paused executions (snapshots), whose workers restore `argv` as it was at the pause.
const EDITS_ARGV_AFTER_A_PREFIX: &str = r#"
#include <pthread.h>
#include <stdio.h>
#include <string.h>
pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
int shared;
void *t(void *a) { for (int i = 0; i < 2; i++) { pthread_mutex_lock(&m); shared++; pthread_mutex_unlock(&m); } return 0; }
int main(int argc, char **argv) {
  volatile long work = 0;
  for (long i = 0; i < 4000000; i++) work += i;
  pthread_t th[3];
  for (int i = 0; i < 3; i++) pthread_create(&th[i], 0, t, 0);
  for (int i = 0; i < 3; i++) pthread_join(th[i], 0);
  int files = 0;
  for (int i = 1; i < argc; i++) {
    if (strcmp(argv[i], "--") == 0) break;
    if (argv[i][0] == '-') argv[i] = NULL;
  }
  for (int i = 1; i < argc; i++) if (argv[i] != NULL) files++;
  printf("%d files %d\n", files, shared);
  return 0;
}
"#;

/// Takes a variable out of the environment it started with (`unsetenv` moves the entries of
/// the initial `envp` array in place) and adds one.
const EDITS_ENVIRON: &str = r#"
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
int x;
void *t(void *a) { x = 1; return 0; }
int main(void) {
  if (!getenv("IRS_TEST_GIVEN")) { printf("IRS_TEST_GIVEN is gone\n"); abort(); }
  if (getenv("IRS_TEST_PUT")) { printf("IRS_TEST_PUT is left over\n"); abort(); }
  unsetenv("IRS_TEST_GIVEN");
  putenv("IRS_TEST_PUT=1");
  setenv("IRS_TEST_SET", "1", 1);
  pthread_t th; pthread_create(&th, 0, t, 0);
  x = 2;
  pthread_join(th, 0);
  return 0;
}
"#;

#[test]
fn arguments_and_environment_the_program_changes_are_restored() {
    let d = scratch("determinism/argv");
    let argv = build(&d, "edits_argv", EDITS_ARGV);
    let environ = build(&d, "edits_environ", EDITS_ENVIRON);
    for way in WAYS {
        let o = verify(&d, way, &argv, &["-a", "-b", "file"], &[]);
        assert_eq!(verdict(&o), "safe", "{way:?}: {}\n{}", o.stdout, o.stderr);
        let o = verify(&d, way, &environ, &[], &[("IRS_TEST_GIVEN", "1")]);
        assert_eq!(verdict(&o), "safe", "{way:?}: {}\n{}", o.stdout, o.stderr);
    }
    let after = build(&d, "edits_argv_after_a_prefix", EDITS_ARGV_AFTER_A_PREFIX);
    let o = verify(&d, &[], &after, &["-a", "-b", "file"], &[]);
    assert_eq!(verdict(&o), "safe", "{}\n{}", o.stdout, o.stderr);
    let j = json(&o);
    assert_eq!(j["traces"], 90, "{j}");
    assert!(j["snapshots"].as_u64().unwrap() >= 1, "runs from snapshots: {j}");
    // And a prefix is anchored on its first execution (no crash that replay cannot reproduce).
    let o = verify(&d, &["--publish", "--anchor", "default"], &argv, &["-a", "-b", "file"], &[]);
    assert_eq!(verdict(&o), "safe", "{}\n{}", o.stdout, o.stderr);
}

/// A file opened (by `fopen` or `open`) before the program's first `malloc`: the execution
/// that opens it first captures it (the verified input), and must leave the heap as the later
/// ones do.
const OPENS_THEN_ALLOCATES: &str = r#"
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
int x;
void *t(void *a) { x = 1; return 0; }
int main(int argc, char **argv) {
  FILE *f = fopen(argv[1], "r");
  int fd = open(argv[2], O_RDONLY);
  char *p = malloc(100);
  p[0] = f ? fgetc(f) : '-';
  if (fd >= 0 && read(fd, p + 1, 1) != 1) p[1] = '-';
  pthread_t th; pthread_create(&th, 0, t, 0);
  x = 2;
  pthread_join(th, 0);
  printf("%c %d\n", p[0], x);
  return 0;
}
"#;

/// A file a constructor opens before `main` (before the fork server, so in the image of every
/// worker): every execution reads it from where it stood then.
const READS_A_FILE_OPENED_BEFORE_MAIN: &str = r#"
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <unistd.h>
static int fd = -1;
__attribute__((constructor)) static void setup(void) { fd = open("data.txt", O_RDONLY); }
int x, y;
void *t(void *a) { x = 1; return 0; }
int main(void) {
  char c = 0;
  if (read(fd, &c, 1) != 1) c = 0;
  pthread_t th; pthread_create(&th, 0, t, 0);
  if (c == 'h') x = 2; else y = 2;
  pthread_join(th, 0);
  printf("%c\n", c);
  return 0;
}
"#;

#[test]
fn a_file_opened_before_the_first_allocation_leaves_the_heap_alone() {
    let d = scratch("determinism/open");
    std::fs::write(d.join("data.txt"), "hello\n").unwrap();
    let prog = build(&d, "opens", OPENS_THEN_ALLOCATES);
    for way in WAYS {
        for args in [["data.txt", "data.txt"], ["missing", "data.txt"], ["data.txt", "missing"]] {
            let o = verify(&d, way, &prog, &args, &[]);
            assert_eq!(verdict(&o), "safe", "{way:?} {args:?}: {}\n{}", o.stdout, o.stderr);
        }
    }
    let before_main = build(&d, "reads_before_main", READS_A_FILE_OPENED_BEFORE_MAIN);
    for way in WAYS {
        let o = verify(&d, way, &before_main, &[], &[]);
        assert_eq!(verdict(&o), "safe", "{way:?}: {}\n{}", o.stdout, o.stderr);
    }
}

/// Variables read (one set, one not, or the environment whole): the execution that reads them
/// first keeps them with the verified input, and must leave the heap as the later ones do. The
/// program makes what its heap statistics say after the reads (`mallinfo2`: chunks kept for
/// reuse count as in use) an address it writes, so two runs whose heaps differ part there (pigz
/// reads `GZIP` and `PIGZ`, then allocates its locks: its two runs of one schedule differed).
const READS_VARIABLES_THEN_ALLOCATES: &str = r#"
#include <malloc.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
extern char **environ;
int x, slots[64];
void *t(void *a) { x = 1; return 0; }
int main(void) {
  struct mallinfo2 a = mallinfo2();
  const char *set = getenv("TEST_MODE_SET"), *unset = getenv("TEST_UNSET_VAR");
  int n = 0;
  if (set && set[0] == 'w') for (char **e = environ; *e; e++) n++;
  struct mallinfo2 b = mallinfo2();
  long d = (long)(b.uordblks - a.uordblks) + 3 * (long)(b.ordblks - a.ordblks) + 7 * (long)(b.arena - a.arena);
  slots[(unsigned long)d % 64] = 1;
  pthread_t th; pthread_create(&th, 0, t, 0);
  x = 2;
  pthread_join(th, 0);
  printf("%s %d %d\n", set ? set : "-", unset != 0, n > 0);
  return 0;
}
"#;

#[test]
fn variables_read_before_the_first_allocation_leave_the_heap_alone() {
    let d = scratch("determinism/getenv");
    let prog = build(&d, "reads_env", READS_VARIABLES_THEN_ALLOCATES);
    for way in WAYS {
        for env in [&[("TEST_MODE_SET", "fast")][..], &[("TEST_MODE_SET", "whole")][..]] {
            let o = verify(&d, way, &prog, &[], env);
            assert_eq!(verdict(&o), "safe", "{way:?} {env:?}: {}\n{}", o.stdout, o.stderr);
        }
    }
}

/// A thread polls a flag, sleeping between reads, until `main` sets it after sleeping itself.
/// With `LONG`, every sleep is 1000 s: the verification ends within the test's time limit only
/// if sleeps cost nothing in EXPLORE.
const POLLS: &str = r#"
#include <pthread.h>
#include <stdio.h>
#include <threads.h>
#include <time.h>
#include <unistd.h>
#ifdef LONG
#define SECONDS 1000
#else
#define SECONDS 0
#endif
int flag;
void *t(void *a) {
  struct timespec ts = {SECONDS, 1000000};
  while (!__atomic_load_n(&flag, __ATOMIC_ACQUIRE)) nanosleep(&ts, 0);
  return 0;
}
int main(void) {
  struct timespec d = {SECONDS, 2000000};
  pthread_t th; pthread_create(&th, 0, t, 0);
  usleep(SECONDS ? 999999 : 3000);
  clock_nanosleep(CLOCK_MONOTONIC, 0, &d, 0);
  thrd_sleep(&d, 0);
  sleep(SECONDS);
  __atomic_store_n(&flag, 1, __ATOMIC_RELEASE);
  pthread_join(th, 0);
  printf("done\n");
  return 0;
}
"#;

/// The same, with a count of the polls: the loop carries a value from one iteration to the
/// next, so it is no spin-wait; `main` sets the flag only once the thread has ended (a bug: the
/// plain build hangs), so every execution polls until the event limit.
const POLLS_COUNTING: &str = r#"
#include <pthread.h>
#include <stdio.h>
#include <unistd.h>
int flag;
void *t(void *a) { long n = 0; while (!__atomic_load_n(&flag, __ATOMIC_ACQUIRE)) { n++; usleep(1000); } return (void *)n; }
int main(void) {
  pthread_t th; pthread_create(&th, 0, t, 0);
  usleep(10000);
  pthread_join(th, 0);
  __atomic_store_n(&flag, 1, __ATOMIC_RELEASE);
  printf("done\n");
  return 0;
}
"#;

#[test]
fn polling_with_sleeps_ends_or_is_incomplete_and_sleeps_cost_no_time() {
    let d = scratch("determinism/poll");
    std::fs::write(d.join("polls.c"), POLLS).unwrap();
    irs_cc(&d, &["-O0", "-g", "-DLONG", "-o", "polls_long", "polls.c", "-lpthread"]).unwrap();
    let long = d.join("polls_long");
    for way in WAYS {
        let o = verify(&d, way, &long, &[], &[]);
        assert_eq!(verdict(&o), "safe", "{way:?}: {}\n{}", o.stdout, o.stderr);
    }
    // Outside EXPLORE a sleep is the C library's: the short build, run directly, really waits
    // (at least its 1 + 3 ms + 2 ms + 2 ms: a lower bound, which sleeping guarantees).
    let short = build(&d, "polls", POLLS);
    let started = std::time::Instant::now();
    let o = run(&mut Command::new(&short), None, T).unwrap();
    assert_eq!(o.stdout, "done\n", "{}", o.stderr);
    assert!(started.elapsed() >= std::time::Duration::from_millis(7), "{:?}", started.elapsed());
    // A loop that is no spin-wait: incomplete, with the schedule of the execution that did
    // not end (at the event limit, not a time-out after real sleeps).
    let counting = build(&d, "polls_counting", POLLS_COUNTING);
    let o = verify(&d, &[], &counting, &[], &[]);
    assert_eq!(verdict(&o), "incomplete", "{}\n{}", o.stdout, o.stderr);
    let j = json(&o);
    let v = &j["violations"][0];
    assert_eq!(v["kind"], "event-limit", "{j}");
    assert!(d.join(v["schedule"].as_str().unwrap()).exists(), "{j}");
}

/// Ends in a crash the first time one order of its threads runs, never again: the count lives
/// in a shared mapping made before `main`, which no execution restores (state outside what irs
/// controls).
const CRASHES_ONCE: &str = r#"
#include <pthread.h>
#include <stdio.h>
#include <sys/mman.h>
static int *runs_of_the_order;
__attribute__((constructor)) static void setup(void) {
  runs_of_the_order = mmap(0, 4096, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
}
int x;
void *t(void *a) {
  if (__atomic_load_n(&x, __ATOMIC_SEQ_CST) == 0 && __atomic_add_fetch(runs_of_the_order, 1, __ATOMIC_SEQ_CST) == 1)
    *(volatile int *)0 = 1;
  return 0;
}
int main(void) {
  pthread_t th;
  pthread_create(&th, 0, t, 0);
  __atomic_store_n(&x, 1, __ATOMIC_SEQ_CST);
  pthread_join(th, 0);
  printf("ok\n");
  return 0;
}
"#;

/// The same, where the run that crashes also makes the exploration start over (the thread reads
/// `y` only in the order that crashes: a reader found late, `word_readers`): the crash is
/// confirmed before the exploration forgets it.
const CRASHES_ONCE_THEN_RESTARTS: &str = r#"
#include <pthread.h>
#include <stdio.h>
#include <sys/mman.h>
static int *runs_of_the_order;
__attribute__((constructor)) static void setup(void) {
  runs_of_the_order = mmap(0, 4096, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
}
int x, y;
void *t(void *a) {
  if (__atomic_load_n(&x, __ATOMIC_SEQ_CST) == 0) {
    (void)__atomic_load_n(&y, __ATOMIC_SEQ_CST);
    if (__atomic_add_fetch(runs_of_the_order, 1, __ATOMIC_SEQ_CST) == 1)
      *(volatile int *)0 = 1;
  }
  return 0;
}
int main(void) {
  pthread_t th;
  pthread_create(&th, 0, t, 0);
  __atomic_store_n(&y, 1, __ATOMIC_SEQ_CST);
  __atomic_store_n(&x, 1, __ATOMIC_SEQ_CST);
  pthread_join(th, 0);
  printf("ok\n");
  return 0;
}
"#;

#[test]
fn a_crash_its_schedule_does_not_reproduce_is_no_verdict() {
    let d = scratch("determinism/once");
    let prog = build(&d, "crashes_once", CRASHES_ONCE);
    for way in [&[][..], &["--fork-each"], &["--publish", "--anchor", "default"]] {
        let o = verify(&d, way, &prog, &[], &[]);
        assert_eq!(o.status.code(), Some(2), "{way:?}: {}\n{}", o.stdout, o.stderr);
        assert!(o.stderr.contains("behaved differently for the same schedule") && o.stderr.contains("signal 11") && o.stderr.contains("not a verdict"), "{way:?}: {}", o.stderr);
        assert!(!o.stdout.contains("verdict: violation"), "{}", o.stdout);
    }
    let schedules: Vec<_> = std::fs::read_dir(&d).unwrap().flatten().filter(|e| e.file_name().to_string_lossy().ends_with(".schedule")).collect();
    assert!(schedules.is_empty(), "no bug schedule is written: {schedules:?}");
    let restarts = build(&d, "crashes_once_then_restarts", CRASHES_ONCE_THEN_RESTARTS);
    let o = verify(&d, &[], &restarts, &[], &[]);
    assert_eq!(o.status.code(), Some(2), "{}\n{}", o.stdout, o.stderr);
    assert!(o.stderr.contains("behaved differently for the same schedule") && o.stderr.contains("signal 11"), "{}", o.stderr);
}

#[test]
fn two_runs_that_differ_are_named_where_they_part() {
    let d = scratch("determinism/differ");
    let prog = build(
        &d,
        "random",
        include_str!("programs/nondet/getrandom_branch.c"),
    );
    // Two runs agree by chance half of the time.
    for _ in 0..12 {
        let o = verify(&d, &[], &prog, &[], &[]);
        if o.status.code() == Some(2) {
            let e = o.stderr.trim();
            assert_eq!(e.lines().count(), 1, "{e}");
            // Where they part, and what each did: the thread, the kind, the object and the
            // source line (the check of the first two runs, or a later run that does not do
            // what an earlier one predicted).
            let whole = e.contains("two runs of the default schedule differ: they part at event") && e.contains("the first run did T1 store") && e.contains("the second T1 store");
            // A later run names what it did (a store to the other variable, or, when that store
            // is no event, its thread's next one) and the store predicted.
            let later = e.contains("this run did T1 ") && e.contains("where an earlier run predicted T1 store");
            assert!(whole || later, "{e}");
            assert!(e.contains("store x at random.c:8:") || e.contains("store y at random.c:8:"), "{e}");
            assert!(!whole || (e.contains("store x at random.c:8:") && e.contains("store y at random.c:8:")), "{e}");
            return;
        }
    }
    panic!("nondeterminism went unnoticed in 12 verifications");
}

/// A thread polls its pool's workers for a second of the clock, as C-Thread-Pool's
/// `thpool_destroy` does, reading `time`, `clock_gettime` and `gettimeofday`; the workers sleep
/// first. With the real clock, how many polls a run made depended on the machine's load, and two
/// runs of one schedule differed; with virtual time (`irs-runtime/src/abi/clock.rs`) every run
/// of a schedule polls alike, in every way executions are run, and time never goes back.
const POLLS_THE_CLOCK: &str = r#"
#include <pthread.h>
#include <stdio.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>
static int alive = 2;
static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
static void *worker(void *p) {
  usleep(2000);
  pthread_mutex_lock(&m); alive--; pthread_mutex_unlock(&m);
  return 0;
}
static double now(void) { struct timespec t; clock_gettime(CLOCK_MONOTONIC, &t); return t.tv_sec + t.tv_nsec / 1e9; }
int main(void) {
  pthread_t a, b;
  time_t start = time(0);
  double t0 = now();
  struct timeval tv0; gettimeofday(&tv0, 0);
  pthread_create(&a, 0, worker, 0);
  pthread_create(&b, 0, worker, 0);
  int polls = 0, left;
  do {
    pthread_mutex_lock(&m); left = alive; pthread_mutex_unlock(&m);
    polls++;
  } while (left && now() - t0 < 0.05);
  pthread_join(a, 0); pthread_join(b, 0);
  struct timeval tv1; gettimeofday(&tv1, 0);
  double t1 = now();
  if (t1 < t0 || tv1.tv_sec < tv0.tv_sec || time(0) < start) return 3;
  printf("polls %d\n", polls > 0);
  return 0;
}
"#;

#[test]
fn polling_the_clock_is_the_same_in_every_run_of_a_schedule() {
    let d = scratch("determinism/clock");
    let prog = build(&d, "clock_poll", POLLS_THE_CLOCK);
    // The plain run ends (the real clock moves on) and prints what the plain build prints.
    let o = run(&mut Command::new(&prog), None, T).unwrap();
    assert!(o.status.success() && o.stdout.trim() == "polls 1", "{} {}", o.how(), o.stderr);
    // The default schedule twice: the same trace (50 polls at 1 ms a read).
    let trace = |i: u32| {
        let o = run(Command::new(irs()).args(["replay", "--schedule-default", "--"]).arg(&prog).current_dir(&d), None, T).unwrap();
        assert!(o.stdout.contains("outcome: exit 0"), "replay {i}: {}{}", o.stdout, o.stderr);
        o.stdout.lines().filter(|l| !l.contains("µs") && !l.contains(" us")).collect::<Vec<_>>().join("\n")
    };
    assert_eq!(trace(0), trace(1), "two runs of the default schedule differ");
    for way in WAYS {
        let o = verify(&d, &[&["--max-executions", "400"], way].concat(), &prog, &[], &[]);
        let v = verdict(&o);
        assert!(["safe", "incomplete"].contains(&v.as_str()), "{way:?}: {v}: {}", o.stdout);
        assert!(json(&o)["violations"].as_array().unwrap().is_empty(), "{way:?}: time went back or a run failed: {}", o.stdout);
    }
}
