//! `irs verify` against an independent oracle (tests/common/oracle.rs): for every program of
//! `tests/verify_programs/`, the oracle runs EVERY interleaving with the executor and groups them
//! into traces under the verifier's two equivalences (reads commute, the default; and
//! Mazurkiewicz). Then `irs verify` runs in five modes and must agree (each with the oracle's
//! traces under its equivalence):
//! - `--optimal`: as many traces as the oracle, no sleep-set-blocked execution, and its
//!   schedules (`--schedules-out`), replayed and canonicalised, are exactly the oracle's traces,
//!   each once;
//! - `--k 1`, `--k 2`: its schedules cover every oracle trace (duplicates allowed);
//! - every mode: the verdict, the exit code and the set of bugs are the oracle's, and every
//!   reported bug's schedule file, replayed, ends in that bug.
//!
//! These checks are `verify_check::check_report` (tests/common/verify_check.rs), which the
//! differential campaign over generated programs (tests/differential.rs) uses too.
//!
//! The oracle is also checked against the `expect-traces:` (Mazurkiewicz traces),
//! `expect-traces-reads-commute:`, `expect-bugs:` and `expect-interleavings:` lines of each
//! program's header: hand counts for the hand-written programs, and for the generated ones
//! (`rand_*.c`) the counts of gen.py's own model of the program, an independent second oracle.
//! A `max-threads: N` line explores the program under `--max-threads N`, oracle and modes alike
//! (the cut is the runtime's, so the oracle counts the executions of the bounded program).
//! An `expect-bug-preemptions: N` line is the fewest preemptions with which some interleaving
//! reaches a bug (`oracle::preemptions`), counted by hand: the oracle's count for bounded
//! search.
//!
//! Environment: `IRS_VERIFY_ORACLE_ONLY=1` runs the oracle alone (no `irs verify`);
//! `IRS_VERIFY_FILTER=a,b` runs only the programs whose names contain `a` or `b`.

mod common;
#[path = "common/oracle.rs"]
mod oracle;
#[path = "common/verify_check.rs"]
mod verify_check;

use common::*;
use irs_verifier::executor::{Executor, Options};
use oracle::OracleResult;
use shared_proto::ThreadId;
use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;
use std::time::Instant;
use verify_check::{check_report, run_verify, Report};

/// The oracle refuses programs with more interleavings than this.
const MAX_INTERLEAVINGS: usize = 20_000;

struct Program {
    name: String,
    src: PathBuf,
    exe: PathBuf,
    expect_traces: Option<usize>,
    expect_traces_rc: Option<usize>,
    expect_interleavings: Option<usize>,
    expect_bugs: Option<BTreeSet<String>>,
    expect_bug_preemptions: Option<usize>,
    max_threads: Option<u32>,
}

fn programs(dir: &Path) -> Vec<Program> {
    let filter: Vec<String> = std::env::var("IRS_VERIFY_FILTER").unwrap_or_default().split(',').filter(|s| !s.is_empty()).map(String::from).collect();
    let mut v: Vec<PathBuf> = std::fs::read_dir(repo().join("tests/verify_programs"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "c"))
        .collect();
    v.sort();
    v.into_iter()
        .filter_map(|src| {
            let name = src.file_stem().unwrap().to_string_lossy().into_owned();
            if !filter.is_empty() && !filter.iter().any(|f| name.contains(f.as_str())) {
                return None;
            }
            let text = std::fs::read_to_string(&src).unwrap();
            let field = |k: &str| text.lines().find_map(|l| l.split_once(k).map(|(_, v)| v.trim().to_string()));
            let expect_traces = field("expect-traces:").map(|v| v.parse().unwrap_or_else(|_| panic!("{name}: bad expect-traces")));
            let expect_traces_rc = field("expect-traces-reads-commute:").map(|v| v.parse().unwrap_or_else(|_| panic!("{name}: bad expect-traces-reads-commute")));
            let expect_interleavings = field("expect-interleavings:").map(|v| v.parse().unwrap_or_else(|_| panic!("{name}: bad expect-interleavings")));
            let expect_bugs = field("expect-bugs:").map(|v| {
                v.split(',').map(|b| b.trim().to_string()).filter(|b| !b.is_empty() && b != "none").collect::<BTreeSet<String>>()
            });
            let max_threads = field("max-threads:").map(|v| v.parse().unwrap_or_else(|_| panic!("{name}: bad max-threads")));
            let expect_bug_preemptions = field("expect-bug-preemptions:").map(|v| v.parse().unwrap_or_else(|_| panic!("{name}: bad expect-bug-preemptions")));
            Some(Program { exe: dir.join(&name), name, src, expect_traces, expect_traces_rc, expect_interleavings, expect_bugs, expect_bug_preemptions, max_threads })
        })
        .collect()
}

/// The checks of one mode; returns the failures (empty: pass) and a short summary.
fn check_mode(prog: &Program, mode: &str, args: &[&str], ex: &mut Executor, truth: &OracleResult, dir: &Path) -> (Vec<String>, String) {
    let name = &prog.name;
    let work = dir.join(format!("{name}.{mode}"));
    let bound = prog.max_threads.map(|n| n.to_string());
    let args: Vec<&str> = args.iter().copied().chain(bound.as_deref().map(|n| ["--max-threads", n]).into_iter().flatten()).collect();
    let rep = match run_verify(&prog.exe, &args, &work) {
        Ok(r) => r,
        Err(e) => return (vec![format!("{name} [{mode}]: irs verify failed: {e}")], format!("{mode}: irs verify failed")),
    };
    let (fails, found) = check_report(name, mode, &rep, ex, truth);
    let summary = format!(
        "{mode}: {found}/{} traces {} ssb {:.1}s {}",
        rep.traces,
        rep.ssb,
        rep.seconds,
        if fails.is_empty() { "ok" } else { "FAIL" }
    );
    (fails, summary)
}

#[test]
fn verify_agrees_with_the_brute_force_oracle() {
    let dir = scratch("verify_oracle");
    let progs = programs(&dir);
    assert!(!progs.is_empty(), "no programs in tests/verify_programs (or IRS_VERIFY_FILTER matches none)");
    let oracle_only = std::env::var("IRS_VERIFY_ORACLE_ONLY").is_ok_and(|v| !v.is_empty() && v != "0");
    let workers = 2;
    let failures = Mutex::new(Vec::<String>::new());
    let lines = Mutex::new(BTreeMap::<String, String>::new());

    // Build in parallel.
    let next = AtomicUsize::new(0);
    std::thread::scope(|s| {
        for _ in 0..workers {
            s.spawn(|| loop {
                let i = next.fetch_add(1, Ordering::SeqCst);
                let Some(p) = progs.get(i) else { break };
                if let Err(e) = irs_cc(&dir, &["-O1", "-pthread", "-o", p.exe.to_str().unwrap(), p.src.to_str().unwrap()]) {
                    failures.lock().unwrap().push(format!("{}: does not build: {e}", p.name));
                }
            });
        }
    });
    let built_ok = failures.lock().unwrap().is_empty();
    assert!(built_ok, "{}", failures.into_inner().unwrap().join("\n"));

    let start = Instant::now();
    let next = AtomicUsize::new(0);
    std::thread::scope(|s| {
        for _ in 0..workers {
            s.spawn(|| loop {
                let i = next.fetch_add(1, Ordering::SeqCst);
                let Some(p) = progs.get(i) else { break };
                let mut fails = Vec::new();
                let mut line = String::new();
                let mut ex = match Executor::start(&p.exe, &[], Options { max_threads: p.max_threads, ..Options::default() }) {
                    Ok(ex) => ex,
                    Err(e) => {
                        failures.lock().unwrap().push(format!("{}: the executor does not start: {e}", p.name));
                        continue;
                    }
                };
                let truth = match oracle::explore_all(&mut ex, MAX_INTERLEAVINGS) {
                    Ok(t) => t,
                    Err(e) => {
                        failures.lock().unwrap().push(format!("{} [oracle]: {e}", p.name));
                        continue;
                    }
                };
                let bugs: Vec<String> = truth.bugs.keys().map(|b| b.kind.clone()).collect();
                let _ = write!(
                    line,
                    "{:<24} {:>6} interleavings {:>5} traces ({} Mazurkiewicz)  bugs [{}]  oracle {:.1}s",
                    p.name,
                    truth.interleavings,
                    truth.traces.len(),
                    truth.mazurkiewicz.len(),
                    bugs.join(","),
                    truth.seconds
                );
                // The oracle against the program's header.
                for inc in &truth.inconsistent {
                    fails.push(format!("{} [oracle]: {inc}", p.name));
                }
                if !truth.multi_violation.is_empty() {
                    let _ = write!(line, "  ({} trace(s) where several threads fail)", truth.multi_violation.len());
                }
                if let Some(n) = p.expect_traces {
                    if n != truth.mazurkiewicz.len() {
                        fails.push(format!("{} [oracle]: {} Mazurkiewicz traces, the header says {n}", p.name, truth.mazurkiewicz.len()));
                    }
                }
                if let Some(n) = p.expect_traces_rc {
                    if n != truth.traces.len() {
                        fails.push(format!("{} [oracle]: {} traces with reads commuting, the header says {n}", p.name, truth.traces.len()));
                    }
                }
                if let Some(n) = p.expect_interleavings {
                    if n != truth.interleavings {
                        fails.push(format!("{} [oracle]: {} interleavings, the header (gen.py's model) says {n}", p.name, truth.interleavings));
                    }
                }
                if let Some(want) = &p.expect_bugs {
                    let got: BTreeSet<String> = truth.bugs.keys().map(|b| b.kind.clone()).collect();
                    if &got != want {
                        fails.push(format!("{} [oracle]: bugs {got:?}, the header says {want:?}", p.name));
                    }
                }
                if let Some(n) = p.expect_bug_preemptions {
                    let least = truth.bug_preemptions.values().min().copied();
                    if least != Some(n) {
                        fails.push(format!("{} [oracle]: the fewest preemptions reaching a bug are {least:?}, the header says {n}", p.name));
                    }
                }
                if !oracle_only {
                    // k = 2 also prunes `U` as soon as it can (from 8 events on), so that pruning
                    // is checked against the oracle too.
                    for (mode, args) in [("optimal", &["--optimal", "--prune-at", "8"][..]), ("k1", &["--k", "1", "--snapshot-gap", "3"][..]), ("k2", &["--k", "2", "--prune-at", "8"][..]), ("optimal-all-words", &["--optimal", "--no-race-free-words"][..]), ("optimal-mazurkiewicz", &["--optimal", "--equivalence", "mazurkiewicz"][..])] {
                        let (f, summary) = check_mode(p, mode, args, &mut ex, &truth, &dir);
                        fails.extend(f);
                        let _ = write!(line, "\n    {summary}");
                    }
                }
                println!("{line}");
                lines.lock().unwrap().insert(p.name.clone(), line);
                failures.lock().unwrap().extend(fails);
            });
        }
    });
    println!("\n==== summary ({:.0} s) ====", start.elapsed().as_secs_f64());
    for l in lines.into_inner().unwrap().values() {
        println!("{l}");
    }
    let f = failures.into_inner().unwrap();
    assert!(f.is_empty(), "{} failure(s):\n{}", f.len(), f.join("\n\n"));
}

/// The checks above catch wrong reports: a report built from the oracle's own answer passes,
/// and each kind of mistake a verifier could make fails with the message that names it. Runs
/// without `irs verify`.
#[test]
fn the_checks_reject_wrong_reports() {
    let dir = scratch("verify_oracle_checks");
    let src = repo().join("tests/verify_programs/lost_update.c");
    let exe = dir.join("lost_update");
    irs_cc(&dir, &["-O1", "-pthread", "-o", exe.to_str().unwrap(), src.to_str().unwrap()]).unwrap();
    let mut ex = Executor::start(&exe, &[], Options::default()).unwrap();
    let truth = oracle::explore_all(&mut ex, MAX_INTERLEAVINGS).unwrap();
    assert_eq!((truth.traces.len(), truth.mazurkiewicz.len()), (4, 6), "the loads commute");
    let (bug, bug_schedule) = truth.bugs.iter().next().map(|(b, s)| (b.clone(), s.clone())).expect("lost_update has a bug");
    let safe_schedule = truth.traces.values().find(|t| t.bug.is_none()).unwrap().schedule.clone();
    let write_schedule = |file: &str, s: &[ThreadId]| {
        let p = dir.join(file);
        std::fs::write(&p, irs_verifier::schedule::format(s)).unwrap();
        p
    };
    let bug_file = write_schedule("bug.schedule", &bug_schedule);
    let good = || Report {
        traces: truth.traces.len() as u64,
        ssb: 0,
        executions: truth.traces.len() as u64,
        verdict: "violation".into(),
        violations: vec![(bug.kind.clone(), bug.message.clone(), bug_file.clone())],
        exit: Some(1),
        seconds: 0.0,
        schedules: truth.traces.values().map(|t| t.schedule.clone()).collect(),
    };
    for mode in ["optimal", "k1"] {
        let (f, n) = check_report("lost_update", mode, &good(), &mut ex, &truth);
        assert!(f.is_empty() && n == 4, "{mode}: the oracle's own answer fails: {f:?}");
    }
    let expect = |mode: &str, r: Report, needle: &str, ex: &mut Executor| {
        let (f, _) = check_report("lost_update", mode, &r, ex, &truth);
        assert!(f.iter().any(|m| m.contains(needle)), "{mode}: expected a failure with `{needle}`, got {f:?}");
    };
    // A missed trace.
    let mut r = good();
    r.schedules.pop();
    r.traces -= 1;
    r.executions -= 1;
    expect("optimal", r, "misses the trace of schedule", &mut ex);
    let mut r = good();
    r.schedules.remove(0);
    r.traces -= 1;
    r.executions -= 1;
    expect("k2", r, "misses the trace of schedule", &mut ex);
    // A trace twice: wrong in optimal mode, allowed otherwise.
    let mut r = good();
    r.schedules.push(r.schedules[0].clone());
    r.traces += 1;
    r.executions += 1;
    expect("optimal", r, "explored more than once", &mut ex);
    // A mode under Mazurkiewicz is checked against the Mazurkiewicz traces: the reads-commute
    // answer has too few.
    expect("optimal-mazurkiewicz", good(), "the oracle has 6 (mazurkiewicz)", &mut ex);
    let mut r = good();
    r.schedules.push(r.schedules[0].clone());
    r.traces += 1;
    r.executions += 1;
    assert!(check_report("lost_update", "k1", &r, &mut ex, &truth).0.is_empty());
    // Counts that do not add up, SSB in optimal mode, a wrong number of lines.
    let mut r = good();
    r.ssb = 1;
    r.executions += 1;
    expect("optimal", r, "expected 0 in optimal mode", &mut ex);
    let mut r = good();
    r.executions += 3;
    expect("k1", r, "!= traces", &mut ex);
    let mut r = good();
    r.traces += 1;
    r.executions += 1;
    expect("k1", r, "--schedules-out has", &mut ex);
    // Verdict, exit code, bugs.
    let mut r = good();
    r.verdict = "safe".into();
    expect("k1", r, "verdict `safe`", &mut ex);
    let mut r = good();
    r.exit = Some(0);
    expect("k1", r, "exit code", &mut ex);
    let mut r = good();
    r.violations.clear();
    expect("k1", r, "misses the bug", &mut ex);
    let mut r = good();
    r.violations.push(("deadlock".into(), String::new(), bug_file.clone()));
    expect("k1", r, "which the oracle never saw", &mut ex);
    let mut r = good();
    r.violations.push(r.violations[0].clone());
    expect("k1", r, "times", &mut ex);
    let mut r = good();
    r.violations[0].2 = write_schedule("safe.schedule", &safe_schedule);
    expect("k1", r, "replays to `exit 0`", &mut ex);
    // A schedule that is only a prefix, and one that cannot be followed.
    let mut r = good();
    let first = r.schedules[0].clone();
    r.schedules[0] = first[..first.len() - 2].to_vec();
    expect("k1", r, "is not a full schedule", &mut ex);
    let mut r = good();
    r.schedules[0] = vec![ThreadId(0), ThreadId(7)];
    expect("k1", r, "replays to `infeasible", &mut ex);
    // Keys: a replayed execution of another trace is another key; thread names are paths.
    let keys: BTreeSet<&String> = truth.traces.keys().collect();
    assert_eq!(keys.len(), 4);
    let k = truth.traces.keys().next().unwrap();
    assert!(k.contains("events of main:") && k.contains("events of main.0:") && k.contains("events of main.1:") && k.contains("word x+0:") && k.contains("thread main.1:"), "{k}");
}
