//! The spin-wait rule (docs/src/spin-waits.md) against bounded iteration, on programs
//! not written for it. By default a thread that completes an iteration of a watched loop that
//! only read halts there for good (spin-assume): that iteration, and every later one, is left
//! out of the execution. `irs verify --spin-bound K` explores the other way: the loop iterates
//! for real, up to K such iterations in a row, and the next one discards the execution. Every
//! execution the default keeps is one the bounded exploration has too (with the halted thread
//! simply not scheduled again), and every execution the bounded one has is, with its read-only
//! iterations left out, one the default has. So on every program:
//! - the violations and crashes (kind and message) are the same set;
//! - a deadlock the bounded exploration finds, the default finds too (the default also finds
//!   livelocks: a loop nothing can change any more, which the bounded one only discards);
//! - a program the default calls `safe` gets `safe-within-bounds` from the bounded one.
//!
//! Programs: the generator's programs with spin-waits (`tests/common/program_gen.rs`, scenario
//! `spin`: flags set, set on a value read, never set, or set after spinning oneself), the held-out
//! spin-wait programs of `tests/programs/sync/` (written without the tool), the oracle's
//! `tests/verify_programs/spin_*.c`, and the IRS paper's busy-waiting programs with one round.
//! `IRS_SPIN_SEEDS=N` checks N generated programs (default 48); `IRS_SPIN_KEEP=DIR` keeps their
//! sources there (for running other builds of irs on them).

mod common;
#[path = "common/oracle.rs"]
#[allow(dead_code)]
mod oracle;
#[path = "common/program_gen.rs"]
mod program_gen;
#[path = "common/verify_check.rs"]
#[allow(dead_code)]
mod verify_check;

use common::*;
use irs_verifier::executor::{Executor, Options, Policy};
use shared_proto::Outcome;
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;
use verify_check::{run_verify, Report};

/// Read-only iterations in a row the bounded exploration allows.
const BOUND: &str = "2";

/// A program to check: its name, and how to build it (source and extra flags).
struct Case {
    name: String,
    source: PathBuf,
    flags: Vec<String>,
}

fn cases(dir: &Path) -> Vec<Case> {
    let mut v = Vec::new();
    let file = |rel: &str| repo().join(rel);
    for entry in std::fs::read_dir(repo().join("tests/verify_programs")).unwrap() {
        let p = entry.unwrap().path();
        let stem = p.file_stem().unwrap().to_string_lossy().into_owned();
        if stem.starts_with("spin_") && p.extension().is_some_and(|x| x == "c") {
            v.push(Case { name: stem, source: p, flags: vec![] });
        }
    }
    for entry in std::fs::read_dir(repo().join("tests/programs/sync")).unwrap() {
        let p = entry.unwrap().path();
        let stem = p.file_stem().unwrap().to_string_lossy().into_owned();
        if stem.starts_with("spinwait_") && p.extension().is_some_and(|x| x == "c") {
            v.push(Case { name: stem, source: p, flags: vec![] });
        }
    }
    // One round: with two, the bounded exploration of dekker has 2.5 million executions.
    for (prog, rounds) in [("peterson", 1), ("dekker", 1), ("lamport", 1)] {
        v.push(Case { name: format!("{prog}_{rounds}"), source: file(&format!("benchmarks/irs_paper/{prog}.c")), flags: vec![format!("-DROUNDS={rounds}")] });
    }
    let want: usize = std::env::var("IRS_SPIN_SEEDS").ok().and_then(|s| s.trim().parse().ok()).unwrap_or(48);
    let mut seed = 0u64;
    let mut found = 0;
    while found < want && seed < 100_000 {
        let g = program_gen::generate(seed);
        if g.features.has("spin") {
            let src = dir.join(format!("seed_{seed}.c"));
            std::fs::write(&src, &g.source).unwrap();
            if let Some(keep) = std::env::var_os("IRS_SPIN_KEEP") {
                std::fs::create_dir_all(&keep).unwrap();
                std::fs::write(Path::new(&keep).join(format!("seed_{seed}.c")), &g.source).unwrap();
            }
            v.push(Case { name: format!("seed_{seed}"), source: src, flags: vec![] });
            found += 1;
        }
        seed += 1;
    }
    v.sort_by(|a, b| a.name.cmp(&b.name));
    v
}

/// The violations and crashes of a report (kind and message), and whether it has a deadlock.
fn bugs(r: &Report) -> (BTreeSet<(String, String)>, bool) {
    let set = r.violations.iter().filter(|(k, _, _)| k != "deadlock").map(|(k, m, _)| (k.clone(), m.clone())).collect();
    (set, r.violations.iter().any(|(k, _, _)| k == "deadlock"))
}

fn check(case: &Case, dir: &Path) -> Result<String, String> {
    let exe = dir.join(&case.name);
    let mut args: Vec<&str> = vec!["-O1", "-pthread"];
    args.extend(case.flags.iter().map(String::as_str));
    args.extend(["-o", exe.to_str().unwrap(), case.source.to_str().unwrap()]);
    irs_cc(dir, &args).map_err(|e| format!("{}: does not build: {e}", case.name))?;
    let work = dir.join(format!("{}.work", case.name));
    let halt = run_verify(&exe, &[], &work.join("halt")).map_err(|e| format!("{}: irs verify: {e}", case.name))?;
    let bounded = run_verify(&exe, &["--spin-bound", BOUND], &work.join("bounded")).map_err(|e| format!("{}: irs verify --spin-bound: {e}", case.name))?;
    let (hb, hd) = bugs(&halt);
    let (bb, bd) = bugs(&bounded);
    let mut wrong = Vec::new();
    if hb != bb {
        wrong.push(format!("violations differ: default {hb:?}, --spin-bound {BOUND} {bb:?}"));
    }
    if bd && !hd {
        wrong.push("the bounded exploration finds a deadlock the default does not".to_string());
    }
    if halt.verdict == "safe" && bounded.verdict != "safe-within-bounds" {
        wrong.push(format!("default safe, bounded `{}`", bounded.verdict));
    }
    if bounded.verdict == "safe" {
        wrong.push("the bounded exploration says plain `safe`".to_string());
    }
    if halt.verdict == "incomplete" || bounded.verdict == "incomplete" {
        wrong.push(format!("an exploration did not finish: default `{}`, bounded `{}`", halt.verdict, bounded.verdict));
    }
    let line = format!(
        "{:<36} default {:<9} {:>6} traces {:>7} executions | bounded {:<18} {:>6} traces {:>7} executions",
        case.name, halt.verdict, halt.traces, halt.executions, bounded.verdict, bounded.traces, bounded.executions
    );
    if wrong.is_empty() {
        let _ = std::fs::remove_dir_all(&work);
        Ok(line)
    } else {
        Err(format!("{line}\n    {}: {}", case.name, wrong.join("; ")))
    }
}

#[test]
fn halting_spinning_threads_finds_what_bounded_iteration_finds() {
    let dir = scratch("spin_rule");
    let cases = cases(&dir);
    let generated = cases.iter().filter(|c| c.name.starts_with("seed_")).count();
    assert!(generated >= 1, "the generator made no program with spin-waits");
    let next = AtomicUsize::new(0);
    let results = Mutex::new(Vec::new());
    std::thread::scope(|s| {
        for _ in 0..2 {
            s.spawn(|| loop {
                let i = next.fetch_add(1, Ordering::SeqCst);
                let Some(case) = cases.get(i) else { break };
                let r = check(case, &dir);
                match &r {
                    Ok(l) | Err(l) => println!("{l}"),
                }
                results.lock().unwrap().push(r);
            });
        }
    });
    let results = results.into_inner().unwrap();
    let failures: Vec<&String> = results.iter().filter_map(|r| r.as_ref().err()).collect();
    println!("==== spin rule: {} programs ({generated} generated), {} disagreements ====", results.len(), failures.len());
    assert!(failures.is_empty(), "{} program(s) where the spin-wait rule and bounded iteration disagree:\n{}", failures.len(), failures.iter().map(|f| f.as_str()).collect::<Vec<_>>().join("\n"));
}

/// Dekker's default schedule halts a thread (the one with priority reads the other's flag before
/// the other backs off): no prefix could be anchored on it. `Policy::Anchor` lets its loops
/// iterate and flags the read-only iterations' steps; the schedule without them is a complete
/// execution under the halting rule, which `irs verify --publish` anchors on.
#[test]
fn a_schedule_with_its_read_only_iterations_left_out_is_a_complete_execution() {
    let dir = scratch("spin_rule_anchor");
    let exe = dir.join("dekker");
    let src = repo().join("benchmarks/irs_paper/dekker.c");
    irs_cc(&dir, &["-O1", "-pthread", "-o", exe.to_str().unwrap(), src.to_str().unwrap()]).unwrap();
    let mut ex = Executor::start(&exe, &[], Options::default()).unwrap();
    let default = ex.run(&[]).unwrap();
    assert_eq!(*default.outcome(), Outcome::Discarded, "dekker's default schedule halts a thread");
    let spun = ex.run_with_policy(&[], Policy::Anchor).unwrap();
    assert!(matches!(spun.outcome(), Outcome::Exit(0)), "{:?}", spun.outcome());
    let reduced = spun.schedule_without_read_only();
    assert!(reduced.len() < spun.schedule().len(), "the iterating run has read-only iterations");
    let again = ex.run(&reduced).unwrap();
    assert!(matches!(again.outcome(), Outcome::Exit(0)), "without them: {:?}", again.outcome());
    assert_eq!(again.schedule(), reduced, "and it is that schedule, no more");
    // The publisher anchors on it.
    let out = run(Command::new(irs()).args(["verify", "--publish", "--anchor", "default", "--"]).arg(&exe).current_dir(&dir), None, std::time::Duration::from_secs(300)).unwrap();
    let _ = run(Command::new(irs()).arg("forget").arg(&exe), None, T);
    assert!(out.stdout.contains("anchored on a correct execution found by search") && out.stdout.contains("verdict: safe"), "{}", out.stdout);
    assert!(!out.stdout.contains("no prefix"), "{}", out.stdout);
}
