//! Condition variables, semaphores, rwlocks, barriers, `pthread_once`, mutex types, spin locks,
//! atomics and spin-waits (DESIGN §3), on held-out programs (`tests/programs/sync/`, written
//! without irs in view; their README gives each one's verdict and how its bug happens):
//! - `irs verify` gives each its verdict, and each bug's schedule replays to it;
//! - a signal wakes any one of the waiters (a choice the exploration takes);
//! - under IRS (`irs run --chaos`), runs of the safe ones never fail and their verification
//!   relaxes them to no constraint, spin-waits included;
//! - serialised runs (the reaction of input-aware IRS) with blocking operations are the same
//!   trace every time.
//! The oracle programs `tests/verify_programs/sync_*.c` and `spin_*.c` check the exploration of
//! these primitives against brute force (`tests/verify_oracle.rs`).

mod common;

use common::*;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

const LONG: Duration = Duration::from_secs(300);

/// Each held-out program's verdict, from its README: `safe`, or the bug kinds it has. A safe
/// program that waits on a condition variable is `safe-within-bounds`, the one bound being that
/// no spurious wake-up was explored ([`SAFE_BUT_SPURIOUS`]).
const EXPECTED: &[(&str, &str)] = &[
    ("atomic_bug_load_store", "assert"),
    ("atomic_safe_builtins", "safe"),
    ("atomic_safe_cas_stack", "safe"),
    ("atomic_safe_fetch_add", "safe"),
    ("barrier_bug_missing_party", "deadlock"),
    ("barrier_bug_serial_result", "assert"),
    ("barrier_safe_phases", "safe"),
    ("cond_bug_lostwakeup", "deadlock"),
    ("cond_bug_nopredicate", "deadlock"),
    ("cond_bug_signal_not_broadcast", "deadlock"),
    ("cond_safe_broadcast", SAFE_BUT_SPURIOUS),
    ("cond_safe_buffer", SAFE_BUT_SPURIOUS),
    ("cond_safe_timedwait", SAFE_BUT_SPURIOUS),
    ("mutex_bug_recursive_unbalanced", "deadlock"),
    ("mutex_safe_errorcheck", "safe"),
    ("mutex_safe_recursive", "safe"),
    ("mutex_safe_timedlock", "safe"),
    ("once_bug_flag", "assert"),
    ("once_safe_init", "safe"),
    ("rwlock_bug_read_for_write", "assert"),
    ("rwlock_safe_readers_writer", "safe"),
    ("sem_bug_init2", "assert"),
    ("sem_bug_never_posted", "deadlock"),
    ("sem_safe_mutex", "safe"),
    ("spin_bug_early_unlock", "assert"),
    ("spin_safe_counter", "safe"),
    // A thread that spins for good with nothing left that could set its flag: a livelock,
    // reported as a deadlock.
    ("spinwait_bug_lost_flag", "deadlock"),
    ("spinwait_bug_peterson_turn", "assert"),
    ("spinwait_safe_message_passing", "safe"),
    ("spinwait_safe_peterson", "safe"),
    ("thread_safe_detach_exit", "safe"),
];

/// `safe-within-bounds`, bounded only by the spurious wake-ups of condition-variable waits that
/// were not explored.
const SAFE_BUT_SPURIOUS: &str = "safe-within-bounds: no spurious wake-ups";

/// Whether a report's verdict and bounds (`--json`, or `irs status`'s state) are `expected`'s.
fn verdict_is(expected: &str, verdict: &str, bounds: &serde_json::Value) -> bool {
    let bounds: Vec<&str> = bounds.as_array().map(|b| b.iter().filter_map(|x| x.as_str()).collect()).unwrap_or_default();
    match expected {
        "safe" => verdict == "safe" && bounds.is_empty(),
        SAFE_BUT_SPURIOUS => verdict == "safe-within-bounds" && bounds.len() == 1 && bounds[0].starts_with("no spurious wake-ups of condition-variable waits"),
        _ => false,
    }
}

fn is_safe(expected: &str) -> bool {
    expected == "safe" || expected == SAFE_BUT_SPURIOUS
}

fn build_all(dir: &Path) -> Vec<(String, PathBuf)> {
    let mut v = Vec::new();
    for (name, _) in EXPECTED {
        let src = repo().join(format!("tests/programs/sync/{name}.c"));
        irs_cc(dir, &["-O1", "-pthread", "-o", name, src.to_str().unwrap()]).unwrap_or_else(|e| panic!("{e}"));
        v.push((name.to_string(), dir.join(name)));
    }
    v
}

fn json(o: &Output) -> serde_json::Value {
    serde_json::from_str(o.stdout.lines().last().unwrap_or_default()).unwrap_or_else(|e| panic!("not JSON ({e}): {}{}", o.stdout, o.stderr))
}

/// Run `f` over `items` two at a time; panic with every failure.
fn two_at_a_time<I: Sync>(items: &[I], f: impl Fn(&I) -> Result<(), String> + Sync) {
    let failures = std::sync::Mutex::new(Vec::new());
    let next = std::sync::atomic::AtomicUsize::new(0);
    std::thread::scope(|s| {
        for _ in 0..2 {
            s.spawn(|| loop {
                let i = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                let Some(item) = items.get(i) else { break };
                if let Err(e) = f(item) {
                    failures.lock().unwrap().push(e);
                }
            });
        }
    });
    let f = failures.into_inner().unwrap();
    assert!(f.is_empty(), "{}", f.join("\n"));
}

#[test]
fn held_out_programs_verify_to_their_verdicts_and_bugs_replay() {
    let d = scratch("sync_primitives/verify");
    let progs = build_all(&d);
    two_at_a_time(&progs, |(name, exe)| {
        let expected = EXPECTED.iter().find(|(n, _)| n == name).unwrap().1;
        let out = d.join(format!("{name}.bugs"));
        let o = run(Command::new(irs()).args(["verify", "--json", "--first-bug", "--time-limit", "120", "--out-dir"]).arg(&out).arg("--").arg(exe), None, LONG)?;
        let j = json(&o);
        let verdict = j["verdict"].as_str().unwrap_or_default();
        if is_safe(expected) {
            return if verdict_is(expected, verdict, &j["bounds"]) { Ok(()) } else { Err(format!("{name}: verdict {verdict} ({}), expected {expected}: {}", j["bounds"], o.stdout)) };
        }
        let bug = j["violations"].as_array().and_then(|v| v.first()).cloned().unwrap_or_default();
        if verdict != "violation" || bug["kind"] != expected {
            return Err(format!("{name}: verdict {verdict} ({}), expected a {expected}: {}", bug["kind"], o.stdout));
        }
        let schedule = bug["schedule"].as_str().unwrap();
        let r = run(Command::new(irs()).args(["replay", "--schedule", schedule, "--"]).arg(exe), None, T)?;
        let outcome = r.stdout.lines().find_map(|l| l.strip_prefix("outcome: ")).unwrap_or_default().to_string();
        let kind_shown = if expected == "assert" { "violation assert" } else { "deadlock" };
        if r.status.code() != Some(1) || !outcome.starts_with(kind_shown) {
            return Err(format!("{name}: the schedule replays to `{outcome}`, not the {expected}"));
        }
        Ok(())
    });
}

/// Two waiters, registered in a fixed order, one signal: the exploration wakes each (POSIX
/// leaves open which), so the second one can be first.
const SIGNAL_ONE: &str = r#"
#include <assert.h>
#include <pthread.h>
pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
pthread_cond_t c = PTHREAD_COND_INITIALIZER, seen = PTHREAD_COND_INITIALIZER;
int waiting, token, first;
void *waiter(void *a) {
  pthread_mutex_lock(&m);
  waiting++;
  pthread_cond_signal(&seen);
  while (!token) pthread_cond_wait(&c, &m);
  token = 0;
  if (!first) first = (int)(long)a;
  pthread_cond_signal(&seen);
  pthread_mutex_unlock(&m);
  return 0;
}
int main(void) {
  pthread_t t1, t2;
  pthread_create(&t1, 0, waiter, (void *)1);
  pthread_mutex_lock(&m);
  while (waiting < 1) pthread_cond_wait(&seen, &m);
  pthread_mutex_unlock(&m);
  pthread_create(&t2, 0, waiter, (void *)2);
  pthread_mutex_lock(&m);
  while (waiting < 2) pthread_cond_wait(&seen, &m);
  token = 1;
  pthread_cond_signal(&c);
  while (!first) pthread_cond_wait(&seen, &m);
  token = 1;
  pthread_cond_broadcast(&c);
  pthread_mutex_unlock(&m);
  pthread_join(t1, 0);
  pthread_join(t2, 0);
  assert(first == 1);
  return 0;
}
"#;

#[test]
fn a_signal_wakes_any_one_of_the_waiters() {
    let d = scratch("sync_primitives/signal_one");
    std::fs::write(d.join("signal_one.c"), SIGNAL_ONE).unwrap();
    irs_cc(&d, &["-O1", "-pthread", "-o", "signal_one", "signal_one.c"]).unwrap();
    let o = run(Command::new(irs()).args(["verify", "--json", "--first-bug", "--out-dir"]).arg(&d).arg("--").arg(d.join("signal_one")), None, LONG).unwrap();
    let j = json(&o);
    assert_eq!(j["verdict"], "violation", "{}", o.stdout);
    // The verdict rests on no bound but the spurious wake-ups not explored: the choice of a
    // waiter is exact (every waiter), not a sample of values.
    assert!(j["bounds"].as_array().is_some_and(|b| b.iter().all(|x| x.as_str().is_some_and(|x| x.starts_with("no spurious wake-ups")))), "{}", o.stdout);
    let schedule = j["violations"][0]["schedule"].as_str().unwrap();
    let text = std::fs::read_to_string(schedule).unwrap();
    assert!(text.contains(":1"), "the schedule takes the second waiter at the signal: {text}");
    let r = run(Command::new(irs()).args(["replay", "--schedule", schedule, "--"]).arg(d.join("signal_one")), None, T).unwrap();
    assert!(r.stdout.contains("outcome: violation assert"), "{}", r.stdout);
}

fn status(prog: &Path, store: &Path) -> serde_json::Value {
    let o = run(Command::new(irs()).args(["status", "--json"]).arg(prog).env("IRS_STORE", store), None, T).unwrap();
    serde_json::from_str(o.stdout.trim()).unwrap_or_else(|e| panic!("status --json ({e}): {}{}", o.stdout, o.stderr))
}

/// Under IRS, with chaos, runs of the safe programs never fail, while their verification goes
/// on and once it has finished: it relaxes them to no constraint (spin-waits too).
#[test]
fn safe_programs_under_irs_never_fail_and_relax_to_no_constraint() {
    let d = scratch("sync_primitives/irs");
    let store = d.join("store");
    let safe: Vec<(String, PathBuf)> = build_all(&d).into_iter().filter(|(n, _)| EXPECTED.iter().any(|(e, v)| e == n && is_safe(v)) && n != "barrier_safe_phases").collect();
    two_at_a_time(&safe, |(name, exe)| {
        let irs_run = |repeat: &str| run(Command::new(irs()).args(["run", "--chaos", "--repeat", repeat, "--"]).arg(exe).env("IRS_STORE", &store), None, LONG);
        let o = irs_run("20")?;
        if !o.status.success() || o.stdout.lines().count() != 20 {
            return Err(format!("{name}: a run under IRS failed: {}{}", o.stdout, o.stderr));
        }
        let started = Instant::now();
        while status(exe, &store)["status"] != "finished" {
            if started.elapsed() > Duration::from_secs(120) {
                return Err(format!("{name}: its verification did not finish"));
            }
            std::thread::sleep(Duration::from_millis(100));
        }
        let s = status(exe, &store);
        let expected = EXPECTED.iter().find(|(n, _)| n == name).unwrap().1;
        let verdict = if expected == "safe" { "safe" } else { "safe-within-bounds" };
        if s["state"]["verdict"] != verdict || s["constraints_in_force"] != 0 {
            return Err(format!("{name}: verdict {} with {} constraints in force", s["state"]["verdict"], s["constraints_in_force"]));
        }
        let o = irs_run("10")?;
        if !o.status.success() || !o.stderr.contains("0 constraints in force") {
            return Err(format!("{name}: after verification: {}", o.stderr));
        }
        let _ = run(Command::new(irs()).arg("forget").arg(exe).env("IRS_STORE", &store), None, T);
        Ok(())
    });
}

/// A run no verification covers is serialised (one thread at a time, by the verifier's default
/// policy): with condition variables, semaphores, barriers and rwlocks too, it is the same trace
/// every time, chaos or not.
#[test]
fn serialised_runs_with_blocking_operations_are_deterministic() {
    let d = scratch("sync_primitives/serial");
    let progs: Vec<(String, PathBuf)> = build_all(&d)
        .into_iter()
        .filter(|(n, _)| ["cond_safe_buffer", "cond_safe_timedwait", "sem_safe_mutex", "barrier_safe_phases", "rwlock_safe_readers_writer", "once_safe_init", "spinwait_safe_message_passing"].contains(&n.as_str()))
        .collect();
    two_at_a_time(&progs, |(name, exe)| {
        let mut shown = Vec::new();
        for i in 0..4 {
            let trace = d.join(format!("{name}.{i}.trace"));
            let o = run(Command::new(exe).env("IRS_MODE", "enforce").env("IRS_SERIAL", "1").env("IRS_CHAOS", "1").env("IRS_TRACE", &trace), None, T)?;
            if !o.status.success() {
                return Err(format!("{name}: a serialised run failed ({}): {}", o.how(), o.stderr));
            }
            let t = run(Command::new(irs()).args(["trace", "show"]).arg(&trace), None, T)?;
            shown.push(t.stdout.lines().map(|l| l.split_whitespace().take(3).collect::<Vec<_>>().join(" ")).collect::<Vec<_>>());
        }
        if !shown.windows(2).all(|w| w[0] == w[1]) {
            return Err(format!("{name}: serialised runs differ:\n{:?}\n{:?}", shown[0], shown[1]));
        }
        Ok(())
    });
}

/// An rwlock's acquisitions and releases are events of their own, the same in EXPLORE and in
/// production runs: per thread (by creation path, as thread ids differ: the nested child is
/// created at a different point), a recorded run and the verified trace have the same rwlock
/// events, readers' and the writer's told apart.
#[test]
fn rwlock_operations_are_the_same_events_in_explore_and_in_recorded_runs() {
    use shared_proto::{ObjectRef, Trace};
    use std::collections::BTreeMap;
    let d = scratch("sync_primitives/rwlock_events");
    let src = d.join("readers.c");
    std::fs::write(
        &src,
        r#"#include <pthread.h>
pthread_rwlock_t l = PTHREAD_RWLOCK_INITIALIZER;
void *reader(void *p) { pthread_rwlock_rdlock(&l); pthread_rwlock_unlock(&l); return p; }
void *parent(void *p) { pthread_t b; pthread_create(&b, 0, reader, 0); pthread_join(b, 0); return p; }
int main(void) {
  pthread_t t[5];
  pthread_create(&t[0], 0, parent, 0);
  for (int i = 1; i < 5; i++) pthread_create(&t[i], 0, reader, 0);
  pthread_rwlock_wrlock(&l);
  pthread_rwlock_unlock(&l);
  for (int i = 0; i < 5; i++) pthread_join(t[i], 0);
  return 0;
}
"#,
    )
    .unwrap();
    irs_cc(&d, &["-O1", "-pthread", "-o", "readers", src.to_str().unwrap()]).unwrap_or_else(|e| panic!("{e}"));
    let exe = d.join("readers");
    let rec = d.join("rec.trace");
    let exp = d.join("exp.trace");
    run(Command::new(irs()).arg("record").arg("--out").arg(&rec).arg("--").arg(&exe), None, T).unwrap_or_else(|e| panic!("{e}"));
    run(Command::new(irs()).args(["replay", "--schedule-default", "--trace-out"]).arg(&exp).arg("--").arg(&exe), None, T).unwrap_or_else(|e| panic!("{e}"));
    let events = |path: &Path| -> BTreeMap<Vec<u32>, Vec<&'static str>> {
        let t = Trace::read(path).unwrap_or_else(|e| panic!("{e}"));
        let mut paths: Vec<Vec<u32>> = Vec::new();
        for info in &t.threads {
            let mut p = info.parent.map(|q| paths[q.index()].clone()).unwrap_or_default();
            if info.parent.is_some() {
                p.push(info.nth_child);
            }
            paths.push(p);
        }
        let mut out: BTreeMap<Vec<u32>, Vec<&'static str>> = BTreeMap::new();
        for e in &t.events {
            if let ObjectRef::RwLock { .. } = e.object {
                out.entry(paths[e.tid.index()].clone()).or_default().push(e.kind.name());
            }
        }
        out
    };
    let (recorded, explored) = (events(&rec), events(&exp));
    assert_eq!(recorded, explored, "the threads' rwlock events differ between a recorded run and EXPLORE");
    let reader = vec!["rwlock-read", "rwlock-read-unlock"];
    let want: BTreeMap<Vec<u32>, Vec<&str>> =
        [(vec![1], reader.clone()), (vec![2], reader.clone()), (vec![3], reader.clone()), (vec![4], reader.clone()), (vec![0, 0], reader), (vec![], vec!["rwlock-write", "rwlock-write-unlock"])].into_iter().collect();
    assert_eq!(explored, want);
}

/// A run relaxed from its start (ENFORCE under an empty prefix, no chaos, no trace recorded)
/// runs an rwlock of the default kind on the C library's own implementation, and a
/// writer-preferring one on irs's (`sync::rwlock_native`); a run under a prefix with
/// constraints runs both on irs's. What the program itself sees says which: glibc counts its
/// readers in the lock's first word, irs keeps them elsewhere.
#[test]
fn a_run_relaxed_from_its_start_uses_the_c_librarys_rwlock_of_the_default_kind() {
    let d = scratch("sync_primitives/rwlock_relaxed");
    let src = d.join("rw.c");
    std::fs::write(
        &src,
        r#"#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
pthread_rwlock_t dflt = PTHREAD_RWLOCK_INITIALIZER;
pthread_rwlock_t wpref = PTHREAD_RWLOCK_WRITER_NONRECURSIVE_INITIALIZER_NP;
pthread_rwlock_t inited;
int g;
void *reader(void *p) {
  pthread_rwlock_t *l = p;
  pthread_rwlock_rdlock(l);
  int seen = *(volatile unsigned *)l != 0;
  pthread_rwlock_unlock(l);
  return (void *)(long)seen;
}
int main(void) {
  pthread_rwlockattr_t a;
  pthread_rwlockattr_init(&a);
  pthread_rwlockattr_setkind_np(&a, PTHREAD_RWLOCK_PREFER_WRITER_NONRECURSIVE_NP);
  pthread_rwlock_init(&inited, &a);
  pthread_rwlock_t *locks[3] = {&dflt, &wpref, &inited};
  for (int i = 0; i < 3; i++) {
    pthread_t t;
    void *seen;
    pthread_create(&t, 0, reader, locks[i]);
    pthread_join(t, &seen);
    printf("%d", (int)(long)seen);
  }
  pthread_rwlock_wrlock(&dflt);
  g = 1;
  printf(" %d EDEADLK=%d\n", pthread_rwlock_rdlock(&dflt) == 35, pthread_rwlock_wrlock(&dflt) == 35);
  pthread_rwlock_unlock(&dflt);
  return 0;
}
"#,
    )
    .unwrap();
    irs_cc(&d, &["-O1", "-pthread", "-o", "rw", src.to_str().unwrap()]).unwrap_or_else(|e| panic!("{e}"));
    let irs_in = |args: &[&str]| {
        let out = run(Command::new(irs()).args(args).current_dir(&d), None, T).unwrap_or_else(|e| panic!("{e}"));
        assert!(out.status.success(), "{args:?}: {}", out.stderr);
        out
    };
    irs_in(&["record", "--out", "rw.trace", "--", "./rw"]);
    irs_in(&["constrain", "--trace", "rw.trace", "--out", "empty.prefix", "--keep", "0"]);
    irs_in(&["constrain", "--trace", "rw.trace", "--out", "full.prefix"]);
    let under = |prefix: &str, extra: &[(&str, &str)]| {
        let mut cmd = Command::new(d.join("rw"));
        cmd.current_dir(&d).env("IRS_PREFIX", prefix);
        for (k, v) in extra {
            cmd.env(k, v);
        }
        let out = run(&mut cmd, None, T).unwrap_or_else(|e| panic!("{e}"));
        assert!(out.status.success(), "{prefix} {extra:?}: {}", out.stderr);
        out.stdout
    };
    assert_eq!(under("empty.prefix", &[]), "100 1 EDEADLK=1\n", "relaxed: glibc's rwlock for the default kind only");
    assert_eq!(under("full.prefix", &[]), "000 1 EDEADLK=1\n", "under constraints: irs's rwlock for every kind");
    assert_eq!(under("empty.prefix", &[("IRS_CHAOS", "1")]), "000 1 EDEADLK=1\n", "chaos shakes irs's rwlock");
}
