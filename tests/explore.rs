//! Controlled execution end to end (DESIGN §7): the real fork server of real instrumented
//! programs, driven by the executor.

mod common;

use common::*;
use irs_verifier::executor::{Executor, Options};
use shared_proto::{Outcome, ThreadId};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

fn build(dir: &Path, name: &str, src: &str) -> PathBuf {
    std::fs::write(dir.join(format!("{name}.c")), src).unwrap();
    irs_cc(dir, &["-O1", "-pthread", "-o", name, &format!("{name}.c")]).unwrap();
    dir.join(name)
}

fn executor(exe: &Path, options: Options) -> Executor {
    Executor::start(exe, &[], options).unwrap()
}

/// Same schedule, same trace: every corpus program, 200 runs of its default schedule and 20
/// replays of a random one.
#[test]
fn same_schedule_same_trace_for_every_corpus_program() {
    let dir = scratch("explore/determinism");
    check_corpus_in_parallel(&dir, |BuiltCorpusProgram { exe, args, stdin, .. }| {
        let mut ex = Executor::start(&exe, &args, Options { stdin, ..Default::default() }).unwrap();
        let first = ex.run(&[]).unwrap();
        for i in 0..200 {
            let again = ex.run(&[]).unwrap();
            if again.trace != first.trace || again.output != first.output {
                return Err(format!("default run {i} differs"));
            }
        }
        let random = ex.run_random(&[], 99).unwrap();
        for _ in 0..20 {
            if ex.run(&random.schedule()).unwrap().trace != random.trace {
                return Err("a random schedule does not replay".into());
            }
        }
        // The steps are the decisions: each names the first event of the operation it chose,
        // which is the chosen thread's pending operation among the enabled ones.
        let t = &first.trace;
        for step in &t.steps {
            let ok = match t.events.get(step.first_event as usize) {
                Some(ev) => step.chosen == ev.tid && step.enabled.iter().any(|p| {
                    // A trylock is pending as `trylock` and may happen as `trylock-fail`.
                    let kind_ok = p.kind == ev.kind || (p.kind == shared_proto::EventKind::TryLock && ev.kind == shared_proto::EventKind::TryLockFail);
                    p.tid == ev.tid && kind_ok && p.site == ev.site
                }),
                None => step.first_event as usize == t.events.len(), // cut off by the end
            };
            if !ok {
                return Err(format!("step {step:?} does not match its event"));
            }
        }
        Ok(())
    });
}

const RACE: &str = r#"
#include <assert.h>
#include <pthread.h>
int x;
void *t(void *a) { int v = x; x = v + 1; return a; }
int main(void) {
  pthread_t a, b;
  pthread_create(&a, 0, t, 0);
  pthread_create(&b, 0, t, 0);
  pthread_join(a, 0);
  pthread_join(b, 0);
  assert(x == 2);
  return 0;
}
"#;

#[test]
fn violations_are_found_and_their_schedules_reproduce_them() {
    let dir = scratch("explore/violation");
    let exe = build(&dir, "race", RACE);
    let mut ex = executor(&exe, Options::default());
    // The default schedule runs each thread to its end: no lost update.
    let default = ex.run(&[]).unwrap();
    assert_eq!(default.trace.outcome, Outcome::Exit(0));
    // Preempt T1 between its load and its store: T0 creates T1 and T2, T1 loads, T2 runs.
    let s: Vec<ThreadId> = [0, 0, 1, 2, 2, 2, 1, 1].iter().map(|&t| ThreadId(t)).collect();
    let bad = ex.run(&s).unwrap();
    assert!(matches!(&bad.trace.outcome, Outcome::Violation { message, .. } if message.contains("x == 2")), "{:?}", bad.trace.outcome);
    let again = ex.run(&bad.schedule()).unwrap();
    assert_eq!(again.trace, bad.trace);
    // The CLI: explore finds it, writes a schedule, replay reproduces it (exit code 1).
    let out = run(Command::new(irs()).args(["explore", "--random", "300", "--seed", "3", "--out-dir"]).arg(&dir).arg("--").arg(&exe), None, T).unwrap();
    assert_eq!(out.status.code(), Some(1), "{}{}", out.stdout, out.stderr);
    let file = std::fs::read_dir(&dir).unwrap().map(|e| e.unwrap().path()).find(|p| p.extension().is_some_and(|x| x == "schedule")).expect("a schedule file");
    let rep = run(Command::new(irs()).arg("replay").arg("--schedule").arg(&file).arg("--").arg(&exe), None, T).unwrap();
    assert_eq!(rep.status.code(), Some(1));
    assert!(rep.stdout.contains("outcome: violation assert"), "{}", rep.stdout);
}

#[test]
fn infeasible_schedules_are_detected() {
    let dir = scratch("explore/infeasible");
    let exe = build(&dir, "race", RACE);
    let mut ex = executor(&exe, Options::default());
    let r = ex.run(&[ThreadId(0), ThreadId(5)]).unwrap();
    // After T0 created T1, both can move.
    assert_eq!(r.trace.outcome, Outcome::Infeasible { step: 1, requested: ThreadId(5), enabled: vec![ThreadId(0), ThreadId(1)] });
    // After creating both threads T0 waits in a join, which is not enabled yet.
    let r = ex.run(&[ThreadId(0), ThreadId(0), ThreadId(0)]).unwrap();
    assert!(matches!(r.trace.outcome, Outcome::Infeasible { step: 2, requested: ThreadId(0), .. }), "{:?}", r.trace.outcome);
    let out = run(Command::new(irs()).arg("replay").arg("--schedule").arg("/dev/null").arg("--").arg(&exe), None, T).unwrap();
    assert_eq!(out.status.code(), Some(0), "an empty schedule is the default policy");
}

#[test]
fn crashes_deadlocks_and_timeouts_are_reported_with_reproducing_schedules() {
    let dir = scratch("explore/outcomes");
    let crash = build(&dir, "crash", "#include <pthread.h>\nint *volatile p; int g;\nvoid *t(void *a) { g = 1; *p = 1; return a; }\nint main(void) { pthread_t x; pthread_create(&x, 0, t, 0); pthread_join(x, 0); return 0; }\n");
    let mut ex = executor(&crash, Options::default());
    let r = ex.run(&[]).unwrap();
    assert_eq!(r.trace.outcome, Outcome::Signal(11));
    assert_eq!(ex.run(&r.schedule()).unwrap().trace, r.trace);
    // The server survives its children's crashes.
    assert_eq!(ex.run(&[]).unwrap().trace.outcome, Outcome::Signal(11));

    let deadlock = build(
        &dir,
        "deadlock",
        r#"#include <pthread.h>
pthread_mutex_t a = PTHREAD_MUTEX_INITIALIZER, b = PTHREAD_MUTEX_INITIALIZER;
void *t1(void *x) { pthread_mutex_lock(&a); pthread_mutex_lock(&b); pthread_mutex_unlock(&b); pthread_mutex_unlock(&a); return x; }
void *t2(void *x) { pthread_mutex_lock(&b); pthread_mutex_lock(&a); pthread_mutex_unlock(&a); pthread_mutex_unlock(&b); return x; }
int main(void) { pthread_t x, y; pthread_create(&x, 0, t1, 0); pthread_create(&y, 0, t2, 0); pthread_join(x, 0); pthread_join(y, 0); return 0; }
"#,
    );
    let mut ex = executor(&deadlock, Options::default());
    assert_eq!(ex.run(&[]).unwrap().trace.outcome, Outcome::Exit(0));
    // T0 creates both, T1 locks a, T2 locks b: then nobody can move.
    let s: Vec<ThreadId> = [0, 0, 1, 2].iter().map(|&t| ThreadId(t)).collect();
    let r = ex.run(&s).unwrap();
    match &r.trace.outcome {
        Outcome::Deadlock { waiting } => {
            assert_eq!(waiting.len(), 3, "{waiting:?}");
            assert!(waiting[0].starts_with("T0 waits to join T1"), "{waiting:?}");
            // Named after the program's global: the same in every execution (a raw address is not).
            assert_eq!(waiting[1], "T1 waits for mutex b held by T2", "{waiting:?}");
            assert_eq!(waiting[2], "T2 waits for mutex a held by T1", "{waiting:?}");
        }
        o => panic!("expected a deadlock, got {o:?}"),
    }
    assert_eq!(ex.run(&r.schedule()).unwrap().trace, r.trace);

    // A thread spinning on shared memory (counting its iterations: not a spin-wait irs
    // recognises) reaches the event limit; one spinning on its own registers runs into the time
    // limit.
    let spin = build(&dir, "spin", "#include <pthread.h>\nvolatile int stop;\nvoid *t(void *a) { long n = 0; while (!stop) n++; return (void *)n; }\nint main(void) { pthread_t x; pthread_create(&x, 0, t, 0); pthread_join(x, 0); return 0; }\n");
    let mut ex = executor(&spin, Options::default());
    assert_eq!(ex.run(&[]).unwrap().trace.outcome, Outcome::EventLimit { events: shared_proto::explore_buffer::Capacity::DEFAULT.events }, "the limit, whichever record ran out");
    let forever = build(&dir, "forever", "#include <pthread.h>\nvoid *t(void *a) { for (volatile long i = 0;; i++) {} return a; }\nint main(void) { pthread_t x; pthread_create(&x, 0, t, 0); pthread_join(x, 0); return 0; }\n");
    let mut ex = executor(&forever, Options { timeout: Duration::from_millis(300), ..Default::default() });
    let r = ex.run(&[]).unwrap();
    assert_eq!(r.trace.outcome, Outcome::Timeout { millis: 300 });
    // ... and the server still works afterwards.
    assert_eq!(ex.run(&[]).unwrap().trace.outcome, Outcome::Timeout { millis: 300 });
}


/// Heap blocks and stack slots are named logically (DESIGN §3): the same in two schedules that
/// allocate in opposite orders, although their raw addresses differ.
#[test]
fn objects_are_named_by_logical_address() {
    let dir = scratch("explore/logical");
    let exe = build(
        &dir,
        "blocks",
        r#"#include <pthread.h>
#include <stdlib.h>
int *shared;
void *worker(void *arg) {
  int local = 1;
  int *volatile escape = &local;
  int *mine = malloc(16); /* kept: the other thread's block lands elsewhere */
  mine[2] = *escape;
  return arg;
}
int main(void) {
  pthread_t a, b;
  pthread_create(&a, 0, worker, 0);
  pthread_create(&b, 0, worker, 0);
  pthread_join(a, 0);
  pthread_join(b, 0);
  return 0;
}
"#,
    );
    let mut ex = executor(&exe, Options::default());
    // T1 runs to its end first (default), or T2 does.
    let t1_first = ex.run(&[]).unwrap();
    let t2_first = ex.run(&[ThreadId(0), ThreadId(0), ThreadId(2), ThreadId(2), ThreadId(2), ThreadId(2)]).unwrap();
    for run in [&t1_first, &t2_first] {
        assert_eq!(run.trace.outcome, Outcome::Exit(0));
    }
    let writes = |run: &irs_verifier::executor::Execution, tid: u32| -> Vec<(String, u64)> {
        let sym = run.trace.symbolizer();
        run.trace
            .events
            .iter()
            .filter(|e| e.tid == ThreadId(tid) && e.kind == shared_proto::EventKind::Access(shared_proto::AccessKind::Store))
            .map(|e| match e.object {
                shared_proto::ObjectRef::Memory { addr, .. } => (run.trace.object_name(&sym, &e.object), addr),
                _ => unreachable!(),
            })
            .collect()
    };
    let (w1a, w1b) = (writes(&t1_first, 1), writes(&t2_first, 1));
    let names = |w: &[(String, u64)]| w.iter().map(|(n, _)| n.clone()).collect::<Vec<_>>();
    assert_eq!(names(&w1a), names(&w1b), "T1's objects have the same names in both schedules");
    assert!(names(&w1a).contains(&"heap[T1#0]+8".to_string()), "{w1a:?}");
    assert!(names(&w1a).iter().any(|n| n.starts_with("stack[T1]-")), "{w1a:?}");
    let heap_addr = |w: &[(String, u64)]| w.iter().find(|(n, _)| n.starts_with("heap")).unwrap().1;
    assert_ne!(heap_addr(&w1a), heap_addr(&w1b), "the raw addresses do differ, which is the point");
}

/// A run from a snapshot is the same execution as the same schedule run from `main`: trace
/// (raw addresses included), output and outcome; snapshots nest and are released innermost
/// first; stdin and output continue where the paused execution was.
#[test]
fn runs_from_snapshots_equal_runs_from_main() {
    use irs_verifier::executor::SnapshotResult;
    let dir = scratch("explore/snapshot");
    let exe = build(
        &dir,
        "snap",
        r#"#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
int counter, seen[3];
pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
void *worker(void *arg) {
  long id = (long)arg;
  int *mine = malloc(sizeof *mine);
  for (int i = 0; i < 3; i++) {
    pthread_mutex_lock(&m);
    *mine = counter++;
    seen[id] += *mine;
    pthread_mutex_unlock(&m);
  }
  free(mine);
  return 0;
}
int main(void) {
  char word[32] = "";
  if (scanf("%31s", word) != 1) return 9;
  printf("first %s\n", word);
  pthread_t t[3];
  for (long i = 0; i < 3; i++) pthread_create(&t[i], 0, worker, (void *)i);
  for (int i = 0; i < 3; i++) pthread_join(t[i], 0);
  if (scanf("%31s", word) != 1) return 8;
  printf("second %s %d %d %d\n", word, seen[0], seen[1], seen[2]);
  return counter == 9 ? 0 : 1;
}
"#,
    );
    let mut ex = executor(&exe, Options { stdin: b"alpha beta\n".to_vec(), ..Default::default() });
    let full = ex.run(&[]).unwrap();
    assert_eq!(full.trace.outcome, Outcome::Exit(0));
    let prefix: Vec<ThreadId> = full.schedule()[..6].to_vec();
    let snap = match ex.snapshot(None, &prefix).unwrap() {
        SnapshotResult::Ready(s) => s,
        SnapshotResult::Ended(e) => panic!("ended before the snapshot: {:?}", e.trace.outcome),
        SnapshotResult::Declined => panic!("the snapshot was declined (the program writes no file)"),
    };
    assert!(ex.run(&[]).is_err(), "runs from main wait until the snapshot is released");
    let mut from_snapshot = Vec::new();
    for seed in 0..20u64 {
        let a = ex.run_random_from(&snap, &[], seed).unwrap();
        assert_eq!(&a.schedule()[..6], &prefix[..]);
        // Nested: pause a bit further on, run from there, release.
        let deeper = match ex.snapshot(Some(&snap), &a.schedule()[6..9]).unwrap() {
            SnapshotResult::Ready(s) => s,
            SnapshotResult::Ended(_) => panic!("the execution is longer than 9 steps"),
            SnapshotResult::Declined => panic!("the snapshot was declined (the program writes no file)"),
        };
        let b = ex.run_from(&deeper, &a.schedule()[9..]).unwrap();
        ex.release(deeper).unwrap();
        assert_eq!(b.trace, a.trace, "seed {seed}: the nested snapshot's run differs");
        assert_eq!(b.output, a.output);
        assert!(String::from_utf8_lossy(&a.output).starts_with("first alpha\nsecond beta "), "{}", String::from_utf8_lossy(&a.output));
        from_snapshot.push(a);
    }
    ex.release(snap).unwrap();
    // From main, the same schedules give the same executions, addresses included.
    for a in &from_snapshot {
        let m = ex.run(&a.schedule()).unwrap();
        if let Some(i) = (0..m.trace.events.len().max(a.trace.events.len())).find(|&i| m.trace.events.get(i) != a.trace.events.get(i)) {
            panic!("event {i} differs:\n from main:     {:?}\n from snapshot: {:?}", m.trace.events.get(i), a.trace.events.get(i));
        }
        assert_eq!(m.trace.steps, a.trace.steps, "steps");
        assert_eq!(m.trace, a.trace);
        assert_eq!(m.output, a.output);
    }
    assert_eq!(ex.run(&full.schedule()).unwrap().trace, full.trace);
}

/// A thread that failed before a snapshot's pause has failed in every run from it: the run's
/// outcome is that failure, as from `main`, not the deadlock of the threads that wait to join
/// it (found by the differential campaign with `--snapshot-gap 1`).
#[test]
fn a_failure_before_a_snapshot_stays_the_outcome_of_runs_from_it() {
    use irs_verifier::executor::SnapshotResult;
    let dir = scratch("explore/snapshot_failure");
    let exe = build(
        &dir,
        "fails",
        r#"#include <assert.h>
#include <pthread.h>
int x;
void *failing(void *a) { assert(x == 1); return 0; }
int main(void) {
  pthread_t t;
  pthread_create(&t, 0, failing, 0);
  x = 2;
  x = 3;
  pthread_join(t, 0);
  return 0;
}
"#,
    );
    let mut ex = executor(&exe, Options::default());
    // T1 fails first (its assertion), then main writes and waits for good to join it.
    let full = ex.run(&[ThreadId(0), ThreadId(1)]).unwrap();
    assert!(matches!(full.trace.outcome, Outcome::Violation { .. }), "{:?}", full.trace.outcome);
    let prefix: Vec<ThreadId> = full.schedule()[..3].to_vec();
    let snap = match ex.snapshot(None, &prefix).unwrap() {
        SnapshotResult::Ready(s) => s,
        SnapshotResult::Ended(e) => panic!("ended before the snapshot: {:?}", e.trace.outcome),
        SnapshotResult::Declined => panic!("the snapshot was declined (the program writes no file)"),
    };
    for _ in 0..3 {
        let r = ex.run_from(&snap, &[]).unwrap();
        assert_eq!(r.trace.outcome, full.trace.outcome, "a run from the snapshot lost the failure before it");
        assert_eq!(r.trace, full.trace);
    }
    ex.release(snap).unwrap();
}

/// What the C library keeps per OS thread is per logical thread in EXPLORE, where all threads
/// are fibers of one OS thread: `__thread` variables, errno, thread-specific data, pthread_self.
/// Every random interleaving prints what the plain build prints.
#[test]
fn thread_local_state_is_per_fiber() {
    let dir = scratch("explore/tls");
    let src = r#"#include <errno.h>
#include <pthread.h>
#include <stdio.h>
__thread int tls_counter = 5;
pthread_key_t key;
pthread_t handles[3], selfs[3];
int bad[3], shared;
pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
static void cleanup(void *v) { (void)v; }
void *worker(void *arg) {
  long id = (long)arg;
  for (int i = 0; i < 3; i++) {
    tls_counter += (int)id;
    errno = 100 + (int)id;
    pthread_setspecific(key, (void *)(id + 1));
    pthread_mutex_lock(&m);
    shared++;
    pthread_mutex_unlock(&m);
    if (errno != 100 + id || (long)pthread_getspecific(key) != id + 1) bad[id] = 1;
  }
  if (tls_counter != 5 + 3 * id) bad[id] = 2;
  selfs[id] = pthread_self();
  return 0;
}
int main(void) {
  pthread_key_create(&key, cleanup);
  for (long i = 0; i < 3; i++) pthread_create(&handles[i], 0, worker, (void *)i);
  for (int i = 0; i < 3; i++) pthread_join(handles[i], 0);
  int same = 0;
  for (int i = 0; i < 3; i++) same += pthread_equal(selfs[i], handles[i]) != 0;
  printf("bad %d %d %d, self %d, main tls %d, shared %d\n", bad[0], bad[1], bad[2], same, tls_counter, shared);
  return 0;
}
"#;
    std::fs::write(dir.join("tls.c"), src).unwrap();
    plain_cc(&dir, &["-O2", "-pthread", "-o", "plain", "tls.c"]).unwrap();
    let plain = run(&mut Command::new(dir.join("plain")), None, T).unwrap();
    assert_eq!(plain.stdout, "bad 0 0 0, self 3, main tls 5, shared 9\n");
    irs_cc(&dir, &["-O2", "-pthread", "-o", "tls", "tls.c"]).unwrap();
    let mut ex = executor(&dir.join("tls"), Options::default());
    let mut distinct = std::collections::HashSet::new();
    for seed in 0..100 {
        let r = ex.run_random(&[], seed).unwrap();
        assert_eq!(r.trace.outcome, Outcome::Exit(0));
        assert_eq!(String::from_utf8_lossy(&r.output), plain.stdout, "seed {seed}");
        distinct.insert(r.schedule());
    }
    assert!(distinct.len() > 50, "the interleavings really differ ({} distinct)", distinct.len());
}

/// `Policy::Follow` takes a schedule as an order to follow as far as it goes: an entry whose
/// thread cannot run yet waits while later ones are taken (a strict schedule is infeasible
/// there), and what it ran is a strict schedule that runs the same execution again.
#[test]
fn a_followed_order_waits_for_a_thread_that_cannot_run_yet() {
    use irs_verifier::executor::Policy;
    let dir = scratch("explore/follow");
    let exe = build(
        &dir,
        "follow",
        r#"
#include <pthread.h>
pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
int x;
void *t(void *a) { pthread_mutex_lock(&m); x++; pthread_mutex_unlock(&m); return 0; }
int main(void) {
  pthread_t a;
  pthread_mutex_lock(&m);
  pthread_create(&a, 0, t, 0);
  x++;
  pthread_mutex_unlock(&m);
  pthread_join(a, 0);
  return x == 2 ? 0 : 1;
}
"#,
    );
    let mut ex = executor(&exe, Options::default());
    // T1 first: it does not exist yet, then waits for `m`, which main holds.
    let order: Vec<ThreadId> = [1, 1, 1, 0, 0, 0, 0, 0, 0].into_iter().map(ThreadId).collect();
    let strict = ex.run(&order).unwrap();
    assert!(matches!(strict.outcome(), Outcome::Infeasible { .. }), "{}", strict.outcome());
    let followed = ex.run_with_policy(&order, Policy::Follow).unwrap();
    assert_eq!(*followed.outcome(), Outcome::Exit(0), "{}", followed.outcome());
    // T1 ran as soon as it could: right after main's unlock, before main's join.
    let kinds: Vec<(u32, shared_proto::EventKind)> = followed.trace.events.iter().map(|e| (e.tid.0, e.kind)).collect();
    let unlock = kinds.iter().position(|&(t, k)| t == 0 && k == shared_proto::EventKind::Unlock).unwrap();
    assert_eq!(kinds[unlock + 1], (1, shared_proto::EventKind::Lock), "{kinds:?}");
    assert_eq!(ex.run(&followed.schedule()).unwrap().trace, followed.trace);
}
