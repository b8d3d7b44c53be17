//! The persistent worker of EXPLORE (DESIGN §7): executions run one after another in one process
//! that restores its memory after each. Every execution must behave as if it had a process of
//! its own: the same trace and output as a forked one, nothing left over from the one before,
//! and a worker that dies (a fatal signal, `_exit`, a time-out) replaced without the executor
//! noticing.

mod common;

use common::*;
use irs_verifier::executor::{Execution, Executor, Options, SnapshotResult};
use shared_proto::{ObjectRef, Outcome, Trace};
use std::path::{Path, PathBuf};
use std::time::Duration;

fn build(dir: &Path, name: &str, src: &str) -> PathBuf {
    std::fs::write(dir.join(format!("{name}.c")), src).unwrap();
    irs_cc(dir, &["-O1", "-pthread", "-w", "-o", name, &format!("{name}.c")]).unwrap();
    dir.join(name)
}

/// The trace with raw addresses replaced: two processes are laid out differently (ASLR), and a
/// forked execution starts from the server's heap, a persistent one from the worker's. What may
/// not differ: logical heap and stack names, and for static memory the global and the offset
/// into it.
fn logical(t: &Trace) -> Trace {
    let mut t = t.clone();
    let globals = t.globals.clone();
    let rebase = |addr: u64| -> u64 {
        match globals.iter().position(|g| g.addr <= addr && addr < g.addr + g.size.max(1)) {
            Some(i) => ((i as u64) << 32) | (addr - globals[i].addr),
            None => u64::MAX,
        }
    };
    let strip = |o: &mut ObjectRef| match o {
        ObjectRef::Memory { addr, logical, .. } | ObjectRef::Mutex { addr, logical } | ObjectRef::Sem { addr, logical, .. } | ObjectRef::Barrier { addr, logical, .. } | ObjectRef::RwLock { addr, logical } => {
            *addr = 0;
            if let Some(l) = logical.as_mut().filter(|l| matches!(l.region, shared_proto::Region::Static)) {
                l.offset = rebase(l.offset);
            }
        }
        ObjectRef::Thread(_) | ObjectRef::Process | ObjectRef::Atomic | ObjectRef::Choice { .. } => {}
    };
    for e in &mut t.events {
        strip(&mut e.object);
    }
    for s in &mut t.steps {
        for p in s.enabled.iter_mut().chain(s.cut.as_mut()) {
            strip(&mut p.object);
        }
    }
    t.globals = Default::default();
    t.image = Default::default();
    t
}

fn same(a: &Execution, b: &Execution) -> bool {
    logical(&a.trace) == logical(&b.trace) && a.output == b.output && a.more_bugs == b.more_bugs
}

/// Every corpus program, its default schedule and five random ones: the persistent worker and a
/// process per execution give the same executions.
#[test]
fn persistent_and_forked_executions_agree() {
    let dir = scratch("explore_worker/agree");
    check_corpus_in_parallel(&dir, |BuiltCorpusProgram { exe, args, stdin, .. }| {
        let options = Options { stdin, ..Default::default() };
        let mut persistent = Executor::start(&exe, &args, options.clone()).unwrap();
        let mut forked = Executor::start(&exe, &args, Options { fork_each: true, ..options }).unwrap();
        let (p, f) = (persistent.run(&[]).unwrap(), forked.run(&[]).unwrap());
        if !same(&p, &f) {
            let (lp, lf) = (logical(&p.trace), logical(&f.trace));
            return Err(if lp != lf {
                let i = lp.events.iter().zip(&lf.events).position(|(a, b)| a != b);
                format!("default schedule: traces differ at event {i:?}: {:?} / {:?}", i.map(|i| &lp.events[i]), i.map(|i| &lf.events[i]))
            } else {
                format!("default schedule: outputs {:?} / {:?}", String::from_utf8_lossy(&p.output), String::from_utf8_lossy(&f.output))
            });
        }
        for seed in 1..=5 {
            let p = persistent.run_random(&[], seed).unwrap();
            if !same(&p, &forked.run(&p.schedule()).unwrap()) {
                return Err(format!("random schedule {seed} differs"));
            }
        }
        Ok(())
    });
}

/// An execution changes everything a C program can change in its own process: globals, static
/// locals, the heap (a block too large for the heap's free space included), stdio buffers,
/// libc's hidden state (strtok, atexit, the environment), descriptors (left open, stdout
/// closed). The next execution sees none of it.
#[test]
fn executions_do_not_see_each_other() {
    let dir = scratch("explore_worker/isolation");
    let exe = build(
        &dir,
        "leaky",
        r#"#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
int counter;
char *big;
static void bye(void) { printf("bye %d\n", counter); }
void *t(void *a) { counter++; return a; }
int main(void) {
  static int calls;
  calls++;
  char words[] = "a b c";
  char *w = strtok(words, " ");
  int fd = open("/dev/null", O_RDONLY);
  char *seen = getenv("IRS_TEST_SEEN");
  setenv("IRS_TEST_SEEN", "yes", 1);
  atexit(bye);
  big = malloc(8 << 20);
  memset(big, 1, 8 << 20);
  pthread_t x;
  pthread_create(&x, 0, t, 0);
  pthread_join(x, 0);
  printf("calls %d counter %d word %s fd %d seen %s big %p", calls, counter, w, fd, seen ? seen : "no", (void *)big);
  fflush(stdout);
  printf(" unflushed\n");
  exit(0);
}
"#,
    );
    let mut ex = Executor::start(&exe, &[], Options::default()).unwrap();
    let first = ex.run(&[]).unwrap();
    let text = String::from_utf8_lossy(&first.output).into_owned();
    assert!(text.starts_with("calls 1 counter 1 word a fd ") && text.contains("seen no") && text.ends_with(" unflushed\nbye 1\n"), "{text}");
    for i in 0..200 {
        let again = ex.run(&[]).unwrap();
        assert_eq!(again.trace, first.trace, "run {i}");
        assert_eq!(String::from_utf8_lossy(&again.output), text, "run {i}");
    }
    let mut forked = Executor::start(&exe, &[], Options { fork_each: true, ..Default::default() }).unwrap();
    let f = forked.run(&[]).unwrap();
    assert!(same(&first, &f) || logical(&first.trace) == logical(&f.trace), "a forked execution does the same");
}

/// A program whose thread, when it runs before `main` arms it, ends the execution's process:
/// with a fatal signal (argument 1), `_exit(7)` (2) or by never stopping (3).
const MORTAL: &str = r#"#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <unistd.h>
int how, armed, g;
void *t(void *a) {
  g++;
  if (!armed) {
    if (how == 1) raise(SIGTERM);
    if (how == 2) _exit(7);
    if (how == 3) for (volatile long i = 0;; i++) {}
  }
  return a;
}
int main(int argc, char **argv) {
  how = atoi(argv[1]);
  g = 1;
  g = 2;
  pthread_t x;
  pthread_create(&x, 0, t, 0);
  armed = 1;
  pthread_join(x, 0);
  return 0;
}
"#;

/// A worker that dies with its execution (a fatal signal, `_exit` from a thread, a time-out) is
/// replaced:
/// the executor gets the same answer as from a forked child, and the next executions are the
/// same as before.
#[test]
fn a_dead_worker_is_replaced() {
    let dir = scratch("explore_worker/death");
    let exe = build(
        &dir,
        "mortal",
        MORTAL,
    );
    // The default schedule arms before the thread runs; a schedule that runs the thread first
    // kills the execution's process.
    for (arg, expect) in [("1", Outcome::Signal(libc::SIGTERM)), ("2", Outcome::Exit(7)), ("3", Outcome::Timeout { millis: 500 })] {
        let mut ex = Executor::start(&exe, &[arg.to_string()], Options { timeout: Duration::from_millis(500), ..Default::default() }).unwrap();
        let normal = ex.run(&[]).unwrap();
        assert_eq!(normal.trace.outcome, Outcome::Exit(0), "how={arg}");
        let deadly = (0..64).map(|seed| ex.run_random(&[], seed).unwrap()).find(|r| r.trace.outcome != Outcome::Exit(0)).expect("a schedule that runs the thread first");
        assert_eq!(deadly.trace.outcome, expect, "how={arg}");
        for _ in 0..3 {
            assert_eq!(ex.run(&deadly.schedule()).unwrap().trace, deadly.trace, "how={arg}: the schedule replays");
            assert_eq!(ex.run(&[]).unwrap().trace, normal.trace, "how={arg}: the replacement worker runs as the first did");
        }
    }
}

/// Snapshots are served by persistent workers too: a continuation that kills its worker (a fatal
/// signal, `_exit`, the time limit) gets the same answer as a forked one would, the paused
/// execution starts a new worker, and the next continuations are the same as before; each equals
/// the same schedule run from `main`.
#[test]
fn a_snapshot_outlives_its_dead_workers() {
    let dir = scratch("explore_worker/snapshot_death");
    let exe = build(
        &dir,
        "mortal_snap",
        MORTAL,
    );
    for (arg, expect) in [("1", Outcome::Signal(libc::SIGTERM)), ("2", Outcome::Exit(7)), ("3", Outcome::Timeout { millis: 500 })] {
        let mut ex = Executor::start(&exe, &[arg.to_string()], Options { timeout: Duration::from_millis(500), ..Default::default() }).unwrap();
        let normal = ex.run(&[]).unwrap();
        let deadly = (0..64).map(|seed| ex.run_random(&[], seed).unwrap()).find(|r| r.trace.outcome != Outcome::Exit(0)).expect("a deadly schedule");
        assert_eq!(deadly.trace.outcome, expect, "how={arg}");
        // Pause after main's first two steps (the two stores to g): both schedules go on from there.
        let prefix = normal.schedule()[..2].to_vec();
        assert_eq!(deadly.schedule()[..2], prefix[..], "how={arg}");
        let snap = match ex.snapshot(None, &prefix).unwrap() {
            SnapshotResult::Ready(s) => s,
            SnapshotResult::Ended(e) => panic!("ended before the snapshot: {:?}", e.trace.outcome),
            SnapshotResult::Declined => panic!("the snapshot was declined (the program writes no file)"),
        };
        for _ in 0..3 {
            let d = ex.run_from(&snap, &deadly.schedule()[2..]).unwrap();
            assert_eq!(d.trace, deadly.trace, "how={arg}: the deadly continuation");
            let n = ex.run_from(&snap, &normal.schedule()[2..]).unwrap();
            assert_eq!(n.trace, normal.trace, "how={arg}: the next worker continues as the first did");
        }
        ex.release(snap).unwrap();
        assert_eq!(ex.run(&[]).unwrap().trace, normal.trace, "how={arg}: after the release, runs start from main again");
    }
}

/// A snapshot at every step of an execution (among them the steps right after a thread's exit,
/// where the thread that pauses has finished), each continued again and again: every
/// continuation equals the same schedule run from `main`.
#[test]
fn snapshots_at_every_step_continue_as_runs_from_main() {
    let dir = scratch("explore_worker/every_step");
    let exe = build(
        &dir,
        "steps",
        r#"#include <pthread.h>
pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
int x, y;
void *a(void *p) { pthread_mutex_lock(&m); x++; pthread_mutex_unlock(&m); return p; }
void *b(void *p) { y = 1; pthread_mutex_lock(&m); x += 2; pthread_mutex_unlock(&m); return p; }
int main(void) {
  pthread_t t[3];
  pthread_create(&t[0], 0, a, 0);
  pthread_create(&t[1], 0, b, 0);
  pthread_create(&t[2], 0, a, 0);
  for (int i = 0; i < 3; i++) pthread_join(t[i], 0);
  return x == 4 && y == 1 ? 0 : 1;
}
"#,
    );
    let mut ex = Executor::start(&exe, &[], Options::default()).unwrap();
    let full = ex.run(&[]).unwrap();
    let steps = full.schedule().len();
    assert!(steps > 10, "{steps}");
    for k in 1..steps {
        let snap = match ex.snapshot(None, &full.schedule()[..k]).unwrap() {
            SnapshotResult::Ready(s) => s,
            SnapshotResult::Ended(e) => panic!("ended before step {k}: {:?}", e.trace.outcome),
            SnapshotResult::Declined => panic!("the snapshot was declined (the program writes no file)"),
        };
        let mut runs = Vec::new();
        for _ in 0..2 {
            for seed in 0..3 {
                runs.push(ex.run_random_from(&snap, &[], seed).unwrap());
            }
            runs.push(ex.run_from(&snap, &[]).unwrap());
        }
        ex.release(snap).unwrap();
        for r in &runs {
            assert_eq!(ex.run(&r.schedule()).unwrap().trace, r.trace, "snapshot at step {k}");
        }
    }
}

/// Snapshots nested in snapshots, as `irs verify --snapshot-gap 1` makes them: the image each
/// level's worker restores after every run is about the program's own writable memory, whatever
/// the depth (a worker's own image, inherited by the execution it forked, was once copied into
/// the next level's, megabytes more per level). Every count stays as without snapshots.
#[test]
fn nested_snapshot_images_do_not_grow_with_depth() {
    let dir = scratch("explore_worker/nested_images");
    let exe = build(
        &dir,
        "nested",
        &mutex_counter_source(3, 2),
    );
    let log = dir.join("images.txt");
    let _ = std::fs::remove_file(&log);
    let traces = |extra: &[&str], debug: bool| {
        let mut cmd = std::process::Command::new(irs());
        cmd.args(["verify", "--json"]).args(extra).arg("--").arg(&exe);
        if debug {
            cmd.env("IRS_EXPLORE_DEBUG", &log);
        }
        let out = run(&mut cmd, None, T).unwrap();
        assert!(out.status.success(), "{}", out.stderr);
        let last = out.stdout.lines().last().unwrap().to_string();
        let j: serde_json::Value = serde_json::from_str(&last).unwrap();
        (j["traces"].as_u64().unwrap(), j["ssb"].as_u64().unwrap())
    };
    assert_eq!(traces(&["--snapshot-gap", "1"], true), traces(&[], false));
    // "worker image (level L): B bytes in R ranges", one line per worker.
    let mut by_level: std::collections::BTreeMap<u32, u64> = Default::default();
    for line in std::fs::read_to_string(&log).unwrap().lines() {
        let words: Vec<&str> = line.split_whitespace().collect();
        let level: u32 = words[3].trim_end_matches("):").parse().unwrap();
        let bytes: u64 = words[4].parse().unwrap();
        let e = by_level.entry(level).or_default();
        *e = (*e).max(bytes);
    }
    assert!(by_level.len() >= 4, "snapshots nested 3 deep at least: {by_level:?}");
    let root = by_level[&0];
    for (level, bytes) in &by_level {
        assert!(*bytes < root + (256 << 10), "level {level}: {bytes} bytes against {root} at the root: {by_level:?}");
    }
}

/// A run followed as it goes (`start_run`, `progress`, `finish`, what `irs verify` walks while
/// the program runs): every `progress` short of the end brings new steps, and the execution is
/// the one `run` gives, from `main` and from a snapshot, except that its events and the steps'
/// enabled lists are left out and decoded on demand, equal to the full run's. A second request while one is
/// in flight is refused, and the first still ends.
#[test]
fn a_run_followed_as_it_goes_is_the_run() {
    let dir = scratch("explore_worker/streamed");
    let exe = build(
        &dir,
        "streamed",
        &mutex_counter_source(3, 20),
    );
    let mut ex = Executor::start(&exe, &[], Options::default()).unwrap();
    let reference = ex.run_random(&[], 7).unwrap();
    let schedule = reference.schedule();
    assert!(schedule.len() > 100, "{}", schedule.len());
    let check = |x: &Execution| {
        assert_eq!((&x.trace.threads, &x.trace.outcome), (&reference.trace.threads, &reference.trace.outcome));
        assert!(x.trace.events.is_empty());
        assert_eq!(x.schedule(), schedule);
        for (a, b) in x.trace.steps.iter().zip(&reference.trace.steps) {
            assert_eq!((a.first_event, a.enabled.len()), (b.first_event, 0));
        }
    };
    let on_demand = |run: &irs_verifier::executor::RunInFlight| {
        for (i, b) in reference.trace.steps.iter().enumerate().take(run.steps().len()) {
            assert_eq!((run.enabled_len(i), run.enabled(i).unwrap()), (b.enabled.len(), b.enabled.clone()), "step {i}");
        }
        let mut events = Vec::new();
        run.events(0..run.event_count(), &mut events).unwrap();
        assert_eq!(events[..], reference.trace.events[..events.len()]);
    };

    let mut run = ex.start_run(None, &schedule).unwrap();
    assert!(ex.start_run(None, &schedule).is_err(), "one run at a time");
    let mut seen = 0;
    while !ex.progress(&mut run).unwrap() {
        assert!(run.steps().len() > seen, "progress brings steps");
        seen = run.steps().len();
        on_demand(&run);
    }
    assert!(run.ended() && run.steps().len() == schedule.len());
    on_demand(&run);
    check(&ex.finish(run).unwrap());

    let snap = match ex.snapshot(None, &schedule[..30]).unwrap() {
        SnapshotResult::Ready(s) => s,
        SnapshotResult::Ended(e) => panic!("ended before step 30: {:?}", e.trace.outcome),
        SnapshotResult::Declined => panic!("the snapshot was declined (the program writes no file)"),
    };
    let mut run = ex.start_run(Some(&snap), &schedule[30..]).unwrap();
    while !ex.progress(&mut run).unwrap() {}
    on_demand(&run);
    check(&ex.finish(run).unwrap());
    ex.release(snap).unwrap();
    assert_eq!(ex.run(&schedule).unwrap().trace, reference.trace, "the executor goes on as before");
}
