//! ENFORCE soundness under stress (DESIGN §4): every benchmark program of the IRS paper, a program
//! with a schedule-dependent assertion, and held-out programs with condition variables, semaphores,
//! rwlocks, barriers, `pthread_once` and spin-waits (300 runs each), run 2,000 times under a prefix
//! with chaos (random delays and yields at every callback): half of the runs under the full prefix,
//! half under a prefix cut in the middle (so that rule 2, threads past their cut while others are
//! still inside theirs, and free threads are exercised). Every run is recorded alongside and its
//! trace must keep the prefix's histories (rule 1, and no event outside the cut before an event
//! inside it that it depends on: `shared_proto::prefix_check`), and no run may fail.

mod common;

use common::*;
use shared_proto::prefix_segment::PrefixView;
use std::path::{Path, PathBuf};
use std::process::Command;

/// Runs per prefix (full and cut): 2,000 per program in all.
const RUNS: usize = 1000;
/// Runs per prefix for the programs with condition variables, semaphores, rwlocks, barriers,
/// `pthread_once` and spin-waits (DESIGN §3).
const SYNC_RUNS: usize = 150;

const RACE: &str = "#include <assert.h>\n#include <pthread.h>\nint x;\nvoid *t(void *a) { int v = x; x = v + 1; return a; }\nint main(void) { pthread_t a, b; pthread_create(&a, 0, t, 0); pthread_create(&b, 0, t, 0); pthread_join(a, 0); pthread_join(b, 0); assert(x == 2); return 0; }\n";

fn irs_in(dir: &Path, args: &[&str]) -> Output {
    run(Command::new(irs()).args(args).current_dir(dir), None, T).unwrap()
}

/// Build `src` in its own directory, record a correct run, and stress it under the full prefix
/// and under one cut after half of its constraints. Returns what went wrong, if anything.
fn stress(name: &str, src: &Path, runs: usize) -> Result<(), String> {
    let d = scratch(&format!("enforce_stress/{name}"));
    irs_cc(&d, &["-O2", "-pthread", "-w", "-o", name, src.to_str().unwrap()])?;
    let exe = format!("./{name}");
    // The shortest of a few correct recordings: a busy-waiting program (peterson, dekker) may
    // record a run with thousands of spin iterations, and 2,000 chaos runs under its prefix,
    // each delayed at every constrained event, then take half an hour instead of seconds.
    let mut recorded: Option<u64> = None;
    let mut correct = 0;
    for _ in 0..100 {
        if correct == 5 {
            break;
        }
        if !irs_in(&d, &["record", "--out", "try.trace", "--", &exe]).status.success() {
            continue;
        }
        correct += 1;
        let len = std::fs::metadata(d.join("try.trace")).map_err(|e| e.to_string())?.len();
        if recorded.is_none_or(|best| len < best) {
            std::fs::rename(d.join("try.trace"), d.join("ok.trace")).map_err(|e| e.to_string())?;
            recorded = Some(len);
        }
    }
    if recorded.is_none() {
        return Err(format!("{name}: no correct run in 100 tries"));
    }
    if !irs_in(&d, &["constrain", "--trace", "ok.trace", "--out", "full.prefix"]).status.success() {
        return Err(format!("{name}: constrain failed"));
    }
    let bytes = std::fs::read(d.join("full.prefix")).unwrap();
    let full = PrefixView::parse(&bytes, None).map_err(|e| e.to_string())?;
    let constraints = full.constraints_within(&full.cutoff(0));
    if constraints == 0 {
        return Err(format!("{name}: its trace has no constraint to enforce"));
    }
    let half = (constraints / 2).max(1).to_string();
    if !irs_in(&d, &["constrain", "--trace", "ok.trace", "--out", "half.prefix", "--keep", &half]).status.success() {
        return Err(format!("{name}: constrain --keep failed"));
    }
    let trace_path = d.join("run.trace");
    for file in ["full.prefix", "half.prefix"] {
        let prefix = d.join(file);
        let bytes = std::fs::read(&prefix).unwrap();
        let view = PrefixView::parse(&bytes, None).map_err(|e| e.to_string())?;
        let cut = view.cutoff(0);
        for i in 0..runs {
            let o = run(Command::new(d.join(name)).env("IRS_PREFIX", &prefix).env("IRS_CHAOS", "1").env("IRS_TRACE", &trace_path), None, T)?;
            if !o.status.success() {
                return Err(format!("{name}, {file}, run {i}: {} {}", o.how(), o.stderr.trim()));
            }
            let t = shared_proto::Trace::read(&trace_path).map_err(|e| format!("{name}, {file}, run {i}: {e}"))?;
            if let Err(e) = shared_proto::prefix_check::check_histories(&t, &view, &cut, Default::default()) {
                return Err(format!("{name}, {file}, run {i}: the run broke the prefix: {e}"));
            }
        }
    }
    Ok(())
}

#[test]
fn every_benchmark_program_respects_its_prefix_under_chaos() {
    // Its own directory: `scratch` empties the one it makes, and the other test of this file
    // runs at the same time in sibling directories.
    let d = scratch("enforce_stress/race_source");
    std::fs::write(d.join("race.c"), RACE).unwrap();
    let mut programs: Vec<(String, PathBuf)> = std::fs::read_dir(repo().join("benchmarks/irs_paper"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "c"))
        .map(|p| (p.file_stem().unwrap().to_string_lossy().into_owned(), p))
        .collect();
    programs.sort();
    assert!(programs.len() >= 8, "the IRS paper's programs: {programs:?}");
    programs.push(("race".into(), d.join("race.c")));
    stress_all(&programs, RUNS);
}

/// `stress` every program, three at a time (the machine has two cores, and chaos runs sleep a
/// lot); panics with every failure.
fn stress_all(programs: &[(String, PathBuf)], runs: usize) {
    let failures = std::sync::Mutex::new(Vec::new());
    let next = std::sync::atomic::AtomicUsize::new(0);
    std::thread::scope(|s| {
        for _ in 0..3 {
            s.spawn(|| loop {
                let i = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                let Some((name, src)) = programs.get(i) else { break };
                if let Err(e) = stress(name, src, runs) {
                    failures.lock().unwrap().push(e);
                }
            });
        }
    });
    let f = failures.into_inner().unwrap();
    assert!(f.is_empty(), "{}", f.join("\n"));
}

/// The same for held-out programs with blocking operations and spin-waits: a thread
/// blocked in a condition variable, a semaphore, a barrier or an rwlock waits on an internal
/// lock, an event like any other, so the enforcer orders it and is never deadlocked by it.
#[test]
fn programs_with_blocking_operations_respect_their_prefix_under_chaos() {
    let programs: Vec<(String, PathBuf)> = ["cond_safe_buffer", "cond_safe_broadcast", "sem_safe_mutex", "rwlock_safe_readers_writer", "barrier_safe_phases", "once_safe_init", "mutex_safe_recursive", "spin_safe_counter", "spinwait_safe_message_passing"]
        .iter()
        .map(|n| (n.to_string(), repo().join(format!("tests/programs/sync/{n}.c"))))
        .collect();
    stress_all(&programs, SYNC_RUNS);
}
