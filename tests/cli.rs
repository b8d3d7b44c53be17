//! The `irs` command end to end: separate compilation, clang pass-through, the inline fast path,
//! crashes, the environment interface, and bad input (DESIGN §5).

mod common;

use common::*;
use std::process::Command;

fn write(dir: &std::path::Path, name: &str, text: &str) {
    std::fs::write(dir.join(name), text).unwrap();
}

const MAIN_C: &str = r#"
#include <pthread.h>
#include <stdio.h>
extern int shared_total;
void add(int v);
static void *worker(void *a) { add(*(int *)a); return 0; }
int main(void) {
  static int one = 1, two = 2;
  pthread_t a, b;
  pthread_create(&a, 0, worker, &one);
  pthread_join(a, 0);
  pthread_create(&b, 0, worker, &two);
  pthread_join(b, 0);
  printf("total %d\n", shared_total);
  return 0;
}
"#;

const UTIL_C: &str = r#"
#include <pthread.h>
int shared_total;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
void add(int v) { pthread_mutex_lock(&lock); shared_total += v; pthread_mutex_unlock(&lock); }
"#;

#[test]
fn several_sources_and_separately_compiled_objects() {
    let d = scratch("cli/multi");
    write(&d, "main.c", MAIN_C);
    write(&d, "util.c", UTIL_C);
    irs_cc(&d, &["-O2", "-pthread", "-o", "together", "main.c", "util.c"]).unwrap();
    irs_cc(&d, &["-O1", "-g", "-c", "util.c"]).unwrap();
    assert!(d.join("util.o").is_file(), "-c writes util.o");
    irs_cc(&d, &["-O1", "-o", "separate", "main.c", "util.o", "-lm", "-pthread"]).unwrap();
    plain_cc(&d, &["-O2", "-pthread", "-o", "plain", "main.c", "util.c"]).unwrap();
    let plain = run(&mut Command::new(d.join("plain")), None, T).unwrap();
    for exe in ["together", "separate"] {
        let out = run(&mut Command::new(d.join(exe)), None, T).unwrap();
        assert_eq!(out.stdout, plain.stdout);
        assert_eq!(out.stdout, "total 3\n");
        let trace = d.join(format!("{exe}.trace"));
        let rec = run(Command::new(irs()).arg("record").arg("--out").arg(&trace).arg("--").arg(d.join(exe)), None, T).unwrap();
        assert!(rec.status.success(), "{}", rec.stderr);
        let t = shared_proto::Trace::read(&trace).unwrap();
        // Sites from both modules, and util.c's global named by the runtime.
        let tags: std::collections::BTreeSet<u32> = t.sites.iter().map(|(id, _)| id.module_tag()).collect();
        assert_eq!(tags.len(), 2, "{exe}: site tables of both modules");
        let by_thread = irs::trace_view::by_thread(&t);
        assert!(by_thread.contains("lock lock\n  load shared_total\n  store shared_total\n  unlock lock"), "{by_thread}");
        assert!(t.sites.iter().any(|(_, s)| s.file == "util.c" && s.line == 5), "file:line from debug info");
    }
}

/// The shared libraries `exe` loads at its start (`NEEDED` entries), sorted.
fn needed(exe: &std::path::Path) -> Vec<String> {
    let out = run(Command::new("readelf").arg("-dW").arg(exe), None, T).unwrap();
    assert!(out.status.success(), "readelf: {}", out.stderr);
    let mut v: Vec<String> =
        out.stdout.lines().filter(|l| l.contains("(NEEDED)")).filter_map(|l| Some(l.split_once('[')?.1.trim_end_matches(']').to_string())).collect();
    v.sort();
    v
}

/// Every shared library loaded is start-up time: an irs build loads what the plain build loads
/// (the runtime's unwinder linked in, its system libraries only where used), what the program
/// asks for (`-lm` for `sqrt`), and the shared unwinder when asked for.
#[test]
fn an_irs_build_loads_the_libraries_the_plain_build_loads() {
    let d = scratch("cli/needed");
    write(&d, "main.c", MAIN_C);
    write(&d, "util.c", UTIL_C);
    write(&d, "root.c", "#include <math.h>\n#include <stdio.h>\n#include <stdlib.h>\nint main(int c, char **v) { printf(\"%.1f\\n\", sqrt(atof(c > 1 ? v[1] : \"16\"))); return 0; }\n");
    for (name, srcs, extra) in [("threads", &["main.c", "util.c"][..], &[][..]), ("root", &["root.c"][..], &["-lm"][..])] {
        let mut args: Vec<&str> = vec!["-O2", "-pthread", "-o"];
        let plain_name = format!("{name}_plain");
        let mut plain_args = args.clone();
        plain_args.push(&plain_name);
        plain_args.extend(srcs);
        plain_args.extend(extra);
        plain_cc(&d, &plain_args).unwrap();
        args.push(name);
        args.extend(srcs);
        args.extend(extra);
        irs_cc(&d, &args).unwrap();
        let (irs_libs, plain_libs) = (needed(&d.join(name)), needed(&d.join(&plain_name)));
        let extra_libs: Vec<&String> = irs_libs.iter().filter(|l| !plain_libs.contains(l) && !l.starts_with("ld-linux")).collect();
        assert!(extra_libs.is_empty(), "{name}: the irs build loads {extra_libs:?} more than the plain build ({plain_libs:?})");
        let (a, b) = (run(&mut Command::new(d.join(name)), None, T).unwrap(), run(&mut Command::new(d.join(&plain_name)), None, T).unwrap());
        assert!(a.status.success() && a.stdout == b.stdout, "{name}: {} vs {}", a.stdout, b.stdout);
    }
    assert!(needed(&d.join("root")).iter().any(|l| l.starts_with("libm.")), "-lm kept where the program uses it");
    irs_cc(&d, &["-O2", "-pthread", "-shared-libgcc", "-o", "shared_unwinder", "main.c", "util.c"]).unwrap();
    assert!(needed(&d.join("shared_unwinder")).iter().any(|l| l.starts_with("libgcc_s")), "-shared-libgcc honoured");
}

/// A recorded trace is a real linearisation of the run (DESIGN §3): a trylock that fails is
/// recorded after the lock it met, never where the trace shows the mutex free (a lock is
/// recorded after it returns; a trylock racing with it used to be recorded first, and a prefix
/// made of such a trace let the trylock succeed under ENFORCE).
#[test]
fn a_recorded_trylock_failure_follows_the_lock_it_met() {
    let d = scratch("cli/trylock_record");
    write(&d, "tl.c", r#"
#include <pthread.h>
#include <sched.h>
static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
static pthread_spinlock_t s;
static int x, y;
static int arrived, held, tried;
static void wait_for(int *flag, int v) { while (__atomic_load_n(flag, __ATOMIC_ACQUIRE) < v) sched_yield(); }
static void *locker(void *a) {
  __atomic_fetch_add(&arrived, 1, __ATOMIC_ACQ_REL); wait_for(&arrived, 2);
  for (int i = 0; i < 300; i++) {
    pthread_mutex_lock(&m); x++; pthread_mutex_unlock(&m);
    pthread_spin_lock(&s); x++; pthread_spin_unlock(&s);
  }
  /* One failure the scheduler cannot take away: both held until the tryer has met them. */
  pthread_mutex_lock(&m); pthread_spin_lock(&s);
  __atomic_store_n(&held, 1, __ATOMIC_RELEASE); wait_for(&tried, 1);
  pthread_spin_unlock(&s); pthread_mutex_unlock(&m);
  return a;
}
static void *tryer(void *a) {
  __atomic_fetch_add(&arrived, 1, __ATOMIC_ACQ_REL); wait_for(&arrived, 2);
  for (int i = 0; i < 300; i++) {
    if (pthread_mutex_trylock(&m) == 0) { y++; pthread_mutex_unlock(&m); }
    if (pthread_spin_trylock(&s) == 0) { y++; pthread_spin_unlock(&s); }
  }
  wait_for(&held, 1);
  if (pthread_mutex_trylock(&m) == 0) return (void *)1;
  if (pthread_spin_trylock(&s) == 0) return (void *)1;
  __atomic_store_n(&tried, 1, __ATOMIC_RELEASE);
  return a;
}
int main(void) {
  pthread_spin_init(&s, 0);
  pthread_t a, b;
  pthread_create(&a, 0, locker, 0);
  pthread_create(&b, 0, tryer, 0);
  pthread_join(a, 0);
  void *r;
  pthread_join(b, &r);
  return r != 0;
}
"#);
    irs_cc(&d, &["-O1", "-pthread", "-o", "tl", "tl.c"]).unwrap();
    let mut failures_seen = 0;
    for round in 0..5 {
        let trace = d.join("tl.trace");
        let rec = run(Command::new(irs()).arg("record").arg("--out").arg(&trace).arg("--").arg(d.join("tl")), None, T).unwrap();
        assert!(rec.status.success(), "{}", rec.stderr);
        let t = shared_proto::Trace::read(&trace).unwrap();
        let mut held = std::collections::BTreeSet::new();
        for (i, e) in t.events.iter().enumerate() {
            let shared_proto::ObjectRef::Mutex { addr, .. } = e.object else { continue };
            match e.kind {
                shared_proto::EventKind::Lock | shared_proto::EventKind::TryLock => {
                    held.insert(addr);
                }
                shared_proto::EventKind::Unlock => {
                    held.remove(&addr);
                }
                shared_proto::EventKind::TryLockFail => {
                    failures_seen += 1;
                    assert!(held.contains(&addr), "run {round}, event {i}: a trylock failure recorded where the trace shows its mutex free");
                }
                _ => {}
            }
        }
    }
    assert!(failures_seen >= 5, "the handshake's trylock failure missing from a trace");
}

#[test]
fn clang_diagnostics_and_exit_code_pass_through() {
    let d = scratch("cli/diag");
    write(&d, "bad.c", "int main(void) { return undeclared_thing; }\n");
    let out = run(Command::new(irs()).args(["cc", "-o", "bad", "bad.c"]).current_dir(&d), None, T).unwrap();
    let plain = run(Command::new(clang()).args(["-o", "bad", "bad.c"]).current_dir(&d), None, T).unwrap();
    assert_eq!(out.status.code(), plain.status.code());
    assert_ne!(out.status.code(), Some(0));
    assert!(out.stderr.contains("error: use of undeclared identifier 'undeclared_thing'"), "{}", out.stderr);
    assert!(!out.stderr.contains("panicked"));
    // Pass-through modes run clang as is.
    write(&d, "pp.c", "#define X 41\nint x = X + 1;\n");
    let pp = run(Command::new(irs()).args(["cc", "-E", "pp.c"]).current_dir(&d), None, T).unwrap();
    assert!(pp.status.success() && pp.stdout.contains("int x = 41 + 1;"), "{}", pp.stdout);
    // -S gives instrumented assembly.
    write(&d, "s.c", "int g; void f(void) { g = 1; }\n");
    irs_cc(&d, &["-O2", "-S", "s.c"]).unwrap();
    let asm = std::fs::read_to_string(d.join("s.s")).unwrap();
    assert!(asm.contains("__irs_before") && asm.contains("irs_modules"), "{asm}");
}

/// How many times a run of `exe` reaches `__irs_before`, counted by gdb (0 or "at least 1").
fn callback_hits(exe: &std::path::Path, env: &[(&str, &str)]) -> bool {
    let mut cmd = Command::new("gdb");
    cmd.args(["-batch", "-nx", "-ex", "break __irs_before", "-ex", "run", "-ex", "kill"]).arg(exe);
    for (k, v) in env {
        cmd.env(k, v);
    }
    let out = run(&mut cmd, None, T).unwrap();
    assert!(out.stdout.contains("Breakpoint 1 at"), "gdb could not set the breakpoint: {}{}", out.stdout, out.stderr);
    out.stdout.contains("Breakpoint 1, ")
}

#[test]
fn off_mode_takes_the_inline_fast_path() {
    let d = scratch("cli/fastpath");
    write(&d, "hot.c", "int a[1000];\nint main(void) { for (int r = 0; r < 1000; r++) for (int i = 0; i < 1000; i++) a[i] += i; return a[7] & 1; }\n");
    irs_cc(&d, &["-O2", "-o", "hot", "hot.c"]).unwrap();
    let syms = run(Command::new("nm").arg(d.join("hot")), None, T).unwrap().stdout;
    assert!(!syms.contains("__irs_guard"), "the guards are inlined, not called:\n{syms}");
    let asm = run(Command::new("objdump").args(["-d", "--no-show-raw-insn"]).arg(d.join("hot")), None, T).unwrap().stdout;
    let user_main = asm.split("<__irs_user_main>:").nth(1).unwrap().split("\n\n").next().unwrap();
    assert!(user_main.contains("%fs:"), "the dispatch is an inline TLS test:\n{user_main}");
    // A million accesses, and not one callback in OFF mode; in RECORD mode the callbacks run.
    assert!(!callback_hits(&d.join("hot"), &[]), "OFF mode must not call the runtime per access");
    let trace = d.join("hot.trace");
    assert!(callback_hits(&d.join("hot"), &[("IRS_MODE", "record"), ("IRS_TRACE", trace.to_str().unwrap())]));
    let out = run(&mut Command::new(d.join("hot")), None, T).unwrap();
    assert_eq!(out.how(), "exit 0");
}

#[test]
fn a_crash_is_recorded_with_its_signal_and_the_events_before_it() {
    let d = scratch("cli/crash");
    write(
        &d,
        "crash.c",
        "#include <pthread.h>\nint g; int *volatile nowhere;\nvoid *w(void *a) { g = 1; *nowhere = 2; return a; }\nint main(void) { pthread_t t; pthread_create(&t, 0, w, 0); pthread_join(t, 0); return 0; }\n",
    );
    irs_cc(&d, &["-O1", "-pthread", "-o", "crash", "crash.c"]).unwrap();
    let trace = d.join("crash.trace");
    let rec = run(Command::new(irs()).arg("record").arg("--out").arg(&trace).arg("--").arg(d.join("crash")), None, T).unwrap();
    assert_eq!(rec.status.code(), Some(128 + 11), "{}", rec.stderr);
    let t = shared_proto::Trace::read(&trace).unwrap();
    assert_eq!(t.outcome, shared_proto::Outcome::Signal(11));
    let shown = irs::trace_view::by_thread(&t);
    assert!(shown.contains("thread 1:\n  store g\n  load nowhere\n"), "{shown}");
}

#[test]
fn record_mode_through_the_environment() {
    let d = scratch("cli/env");
    write(&d, "p.c", "int g;\nint main(void) { g = 5; return g; }\n");
    irs_cc(&d, &["-o", "p", "p.c"]).unwrap();
    let trace = d.join("p.trace");
    let out = run(Command::new(d.join("p")).env("IRS_MODE", "record").env("IRS_TRACE", &trace), None, T).unwrap();
    assert_eq!(out.how(), "exit 5");
    let t = shared_proto::Trace::read(&trace).unwrap();
    assert_eq!(irs::trace_view::by_thread(&t), "outcome: exit 5\nthread 0:\n  store g\n  load g\n  end the process\n");
    let bad = run(Command::new(d.join("p")).env("IRS_MODE", "bogus"), None, T).unwrap();
    assert_eq!(bad.how(), "exit 2");
    assert_eq!(bad.stderr.trim().lines().count(), 1, "{}", bad.stderr);
    assert!(bad.stderr.contains("unknown IRS_MODE"));
    let no_trace = run(Command::new(d.join("p")).env("IRS_MODE", "record"), None, T).unwrap();
    assert_eq!(no_trace.how(), "exit 2");
    assert!(no_trace.stderr.contains("IRS_TRACE"));
}

/// One clear line on stderr, a non-zero exit, no panic.
fn assert_clean_error(out: &Output, needle: &str) {
    assert_ne!(out.status.code(), Some(0), "must fail: {}", out.stderr);
    assert!(out.status.code().is_some(), "must exit, not die: {}", out.how());
    assert!(!out.stderr.contains("panicked") && !out.stderr.contains("backtrace"), "{}", out.stderr);
    let first = out.stderr.lines().next().unwrap_or("");
    assert!(first.contains(needle), "expected {needle:?} in the first line of: {}", out.stderr);
}

#[test]
fn bad_input_gets_one_clear_line_and_a_nonzero_exit() {
    let d = scratch("cli/bad");
    write(&d, "notes.txt", "hello\n");
    write(&d, "x.cpp", "int main() {}\n");
    write(&d, "ok.c", "int main(void) { return 0; }\n");
    write(&d, "not-a-trace", "just text\n");
    // A file preprocessed for ILP32 (as SV-COMP's .i tasks are): its pthread_mutex_t is glibc's
    // 32-bit one, which this machine's pthread_mutex_init would write past.
    write(
        &d,
        "ilp32.i",
        "typedef union { char __size[24]; long int __align; } pthread_mutex_t;\n\
         extern int pthread_mutex_init(pthread_mutex_t *m, const void *a);\n\
         pthread_mutex_t m; int neighbour;\n\
         int main(void) { pthread_mutex_init(&m, 0); return neighbour; }\n",
    );
    plain_cc(&d, &["-o", "plain", "ok.c"]).unwrap();
    irs_cc(&d, &["-o", "inst", "ok.c"]).unwrap();
    let irs_in = |args: &[&str]| run(Command::new(irs()).args(args).current_dir(&d), None, T).unwrap();

    for (args, needle) in [
        (vec!["cc", "-o", "p", "missing.c"], "missing.c: no such file"),
        (vec!["cc", "-o", "p", "notes.txt"], "not a C source"),
        (vec!["cc", "-o", "p", "x.cpp"], "C++ is not supported"),
        (vec!["cc", "-o", "p", "ilp32.i"], "its pthread_mutex_t is 24 bytes, this machine's C library's 40"),
        (vec!["record", "--out", "t.trace", "--", "./plain"], "not built by irs cc"),
        (vec!["record", "--out", "t.trace", "--", "./notes.txt"], "not an ELF"),
        (vec!["record", "--out", "t.trace", "--", "./nope"], "no such program"),
        (vec!["record", "--out", "/nonexistent-dir/t.trace", "--", "./inst"], "cannot write /nonexistent-dir/t.trace"),
        (vec!["record", "--out", ".", "--", "./inst"], "it is a directory"),
        (vec!["trace", "show", "not-a-trace"], "not an irs trace"),
        (vec!["trace", "show", "missing.trace"], "cannot read trace"),
        (vec!["frobnicate"], "unrecognized subcommand"),
        (vec!["record", "--bogus-flag"], "unexpected argument"),
    ] {
        let out = irs_in(&args);
        assert_clean_error(&out, needle);
    }

    // A truncated and a corrupted trace are rejected, not misread.
    let rec = irs_in(&["record", "--out", "good.trace", "--", "./inst"]);
    assert!(rec.status.success(), "{}", rec.stderr);
    let bytes = std::fs::read(d.join("good.trace")).unwrap();
    std::fs::write(d.join("short.trace"), &bytes[..bytes.len() / 2]).unwrap();
    assert_clean_error(&irs_in(&["trace", "show", "short.trace"]), "corrupt or truncated");
    let mut v = bytes.clone();
    v[8] = 99;
    std::fs::write(d.join("v99.trace"), &v).unwrap();
    assert_clean_error(&irs_in(&["trace", "show", "v99.trace"]), "format version 99");
}

/// Function versioning must not change behaviour: by-value structs, varargs, function pointers
/// and their identity, recursion, statics, weak functions, constructors, setjmp/longjmp.
#[test]
fn versioned_functions_keep_their_behaviour_and_abi() {
    let d = scratch("cli/abi");
    write(
        &d,
        "abi.c",
        r#"
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
struct big { long a[9]; char tag[16]; };
static long total;
static int ctor_ran;
static jmp_buf env;
__attribute__((constructor)) static void init(void) { ctor_ran = 1; }
__attribute__((weak)) long weak_fn(long x) { return x * 3; }
static struct big make(long base) { struct big b; for (int i = 0; i < 9; i++) b.a[i] = base + i; strcpy(b.tag, "made"); return b; }
static long sum_big(struct big b, long extra) { long s = extra; for (int i = 0; i < 9; i++) s += b.a[i]; b.a[0] = -1; return s + (long)strlen(b.tag); }
static long vsum(int n, ...) { va_list ap; va_start(ap, n); long s = 0; for (int i = 0; i < n; i++) s += va_arg(ap, long); va_end(ap); return s; }
static long fib(long n) { return n < 2 ? n : fib(n - 1) + fib(n - 2); }
static void jump(int v) { total += v; longjmp(env, v); }
static void *worker(void *arg) {
  struct big b = make((long)arg);
  long (*fp)(struct big, long) = sum_big;
  long r = fp(b, 1) + vsum(3, 1L, 2L, 3L) + fib(15) + weak_fn(2);
  __sync_fetch_and_add(&total, r);
  return fp == sum_big ? arg : 0;
}
int main(void) {
  pthread_t t[2]; void *ret[2];
  for (long i = 0; i < 2; i++) pthread_create(&t[i], 0, worker, (void *)(i + 10));
  for (int i = 0; i < 2; i++) pthread_join(t[i], &ret[i]);
  volatile int jumped = 0;
  if (setjmp(env) == 0) jump(5); else jumped = 1;
  printf("%ld %d %ld %ld %d\n", total, ctor_ran, (long)ret[0], (long)ret[1], jumped);
  return 0;
}
"#,
    );
    plain_cc(&d, &["-O2", "-pthread", "-o", "plain", "abi.c"]).unwrap();
    let plain = run(&mut Command::new(d.join("plain")), None, T).unwrap();
    for opt in ["-O0", "-O2"] {
        irs_cc(&d, &[opt, "-pthread", "-o", "inst", "abi.c"]).unwrap();
        let off = run(&mut Command::new(d.join("inst")), None, T).unwrap();
        assert_eq!((off.how(), &off.stdout), (plain.how(), &plain.stdout), "{opt} OFF: {}", off.stderr);
        let trace = d.join("abi.trace");
        let rec = run(Command::new(irs()).arg("record").arg("--out").arg(&trace).arg("--").arg(d.join("inst")), None, T).unwrap();
        assert_eq!((rec.how(), &rec.stdout), (plain.how(), &plain.stdout), "{opt} RECORD: {}", rec.stderr);
        let t = shared_proto::Trace::read(&trace).unwrap();
        assert_eq!(t.threads.len(), 3);
        assert!(irs::trace_view::by_thread(&t).contains("rmw total"), "the twins ran in RECORD mode");
    }
}
