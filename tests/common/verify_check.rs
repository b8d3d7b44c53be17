//! Checking one `irs verify` report against the brute-force oracle (`oracle.rs`): shared by
//! tests/verify_oracle.rs (the hand-written and gen.py programs) and tests/differential.rs (the
//! generated programs of `program_gen.rs`). A test that uses it declares, at its root,
//! `mod common;`, `#[path = "common/oracle.rs"] mod oracle;` and
//! `#[path = "common/verify_check.rs"] mod verify_check;`.
#![allow(dead_code)]

use crate::common::{irs, run};
use crate::oracle::{self, Bug, OracleResult};
use irs_verifier::executor::Executor;
use shared_proto::equivalence::Equivalence;
use shared_proto::ThreadId;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

/// One `irs verify` run may take this long.
pub const VERIFY_TIMEOUT: Duration = Duration::from_secs(300);

/// What one `irs verify` run reported.
#[derive(Debug)]
pub struct Report {
    pub traces: u64,
    pub ssb: u64,
    pub executions: u64,
    pub verdict: String,
    /// (kind, message, schedule file)
    pub violations: Vec<(String, String, PathBuf)>,
    pub exit: Option<i32>,
    pub seconds: f64,
    pub schedules: Vec<Vec<ThreadId>>,
}

/// Run `irs verify MODE --json --out-dir WORK/bugs --schedules-out WORK/schedules.txt -- EXE` in
/// the fresh directory `work` and read its report.
pub fn run_verify(exe: &Path, mode: &[&str], work: &Path) -> Result<Report, String> {
    let _ = std::fs::remove_dir_all(work);
    std::fs::create_dir_all(work).unwrap();
    let sched_file = work.join("schedules.txt");
    let out_dir = work.join("bugs");
    let mut cmd = Command::new(irs());
    cmd.arg("verify").args(mode).arg("--json").arg("--out-dir").arg(&out_dir).arg("--schedules-out").arg(&sched_file).arg("--").arg(exe).current_dir(work);
    let start = Instant::now();
    let out = run(&mut cmd, None, VERIFY_TIMEOUT)?;
    let seconds = start.elapsed().as_secs_f64();
    let last = out.stdout.lines().rev().find(|l| !l.trim().is_empty()).unwrap_or("");
    let json: serde_json::Value = serde_json::from_str(last).map_err(|e| {
        format!("the last line of stdout is not JSON ({e}); exit {}; stdout:\n{}\nstderr:\n{}", out.how(), out.stdout, out.stderr)
    })?;
    let num = |k: &str| json.get(k).and_then(|v| v.as_u64()).ok_or_else(|| format!("JSON has no integer `{k}`: {last}"));
    let mut violations = Vec::new();
    for v in json.get("violations").and_then(|v| v.as_array()).ok_or_else(|| format!("JSON has no `violations` array: {last}"))? {
        let s = |k: &str| v.get(k).and_then(|x| x.as_str()).unwrap_or("").to_string();
        let path = PathBuf::from(s("schedule"));
        let path = if path.is_absolute() { path } else { work.join(path) };
        violations.push((s("kind"), s("message"), path));
    }
    let schedules = match std::fs::read_to_string(&sched_file) {
        Ok(text) => text
            .lines()
            .filter(|l| !l.trim().is_empty())
            .map(|l| irs_verifier::schedule::parse(l).map_err(|e| format!("{}: {e}", sched_file.display())))
            .collect::<Result<Vec<_>, _>>()?,
        Err(e) => return Err(format!("cannot read --schedules-out {}: {e}", sched_file.display())),
    };
    Ok(Report {
        traces: num("traces")?,
        ssb: num("ssb")?,
        executions: num("executions")?,
        verdict: json.get("verdict").and_then(|v| v.as_str()).unwrap_or("").to_string(),
        violations,
        exit: out.status.code(),
        seconds,
        schedules,
    })
}

pub fn sched(s: &[ThreadId]) -> String {
    oracle::schedule_string(s)
}

/// Check one report of `irs verify` against the oracle: the failures, and how many distinct
/// oracle traces its schedules gave. `mode` is `optimal...` (exact
/// count, each trace once, no SSB) or another (`k1`, `k2`: every trace covered); a mode whose
/// name holds `mazurkiewicz` ran with `--equivalence mazurkiewicz` and is checked against the
/// oracle's traces under it.
pub fn check_report(name: &str, mode: &str, rep: &Report, ex: &mut Executor, truth: &OracleResult) -> (Vec<String>, usize) {
    let eq = if mode.contains("mazurkiewicz") { Equivalence::Mazurkiewicz } else { Equivalence::ReadsCommute };
    let traces = truth.traces_under(eq);
    let mut fails = Vec::new();
    let mut fail = |m: String| fails.push(format!("{name} [{mode}]: {m}"));
    let expect_bug = !truth.bugs.is_empty();
    // Exit code and verdict.
    let want_exit = if expect_bug { 1 } else { 0 };
    if rep.exit != Some(want_exit) {
        fail(format!("exit code {:?}, expected {want_exit}", rep.exit));
    }
    // A bug is a violation whatever else; else an execution cut at the thread bound makes the
    // verdict a bounded one, which names the bound, and so does a wait on a condition variable
    // (no spurious wake-up explored).
    let cut = truth.traces.values().any(|t| t.outcomes.iter().any(|o| o.starts_with("cut at the thread bound")));
    // (A mode whose name holds `spurious` ran with `--spurious-wake-ups`: no such bound.)
    let unexplored_wake_ups = truth.cond_waits && !mode.contains("spurious");
    let want_verdict = if expect_bug { "violation" } else if cut || unexplored_wake_ups { "safe-within-bounds" } else { "safe" };
    if rep.verdict != want_verdict {
        fail(format!("verdict `{}`, expected `{want_verdict}` (oracle bugs: {:?})", rep.verdict, truth.bug_set()));
    }
    // Counts.
    if rep.executions != rep.traces + rep.ssb {
        fail(format!("executions {} != traces {} + ssb {}", rep.executions, rep.traces, rep.ssb));
    }
    if rep.schedules.len() as u64 != rep.traces {
        fail(format!("--schedules-out has {} lines, but traces = {}", rep.schedules.len(), rep.traces));
    }
    if mode.starts_with("optimal") {
        if rep.traces != traces.len() as u64 {
            fail(format!("traces = {}, the oracle has {} ({})", rep.traces, traces.len(), eq.name()));
        }
        if rep.ssb != 0 {
            fail(format!("ssb = {}, expected 0 in optimal mode", rep.ssb));
        }
    }
    // Replay every schedule and canonicalise it.
    let mut found: BTreeMap<String, Vec<usize>> = BTreeMap::new();
    for (i, s) in rep.schedules.iter().enumerate() {
        let e = match ex.run(s) {
            Ok(e) => e,
            Err(err) => {
                fail(format!("replaying schedule line {} [{}]: {err}", i + 1, sched(s)));
                continue;
            }
        };
        if !oracle::is_complete(e.outcome()) {
            fail(format!("schedule line {} [{}] replays to `{}`", i + 1, sched(s), e.outcome()));
            continue;
        }
        if e.schedule() != *s {
            fail(format!("schedule line {} is not a full schedule: [{}] runs as [{}]", i + 1, sched(s), sched(&e.schedule())));
        }
        let key = oracle::key_under(&e.trace, eq, &truth.ordered);
        if !traces.contains_key(&key) {
            fail(format!("schedule line {} [{}] ({}) is a trace the oracle does not have:\n{key}", i + 1, sched(s), e.outcome()));
        }
        found.entry(key).or_default().push(i + 1);
    }
    let mut missing = 0;
    for (key, info) in traces {
        if !found.contains_key(key) {
            missing += 1;
            if missing <= 3 {
                fail(format!("misses the trace of schedule [{}] (outcome {}):\n{key}", sched(&info.schedule), info.outcome));
            }
        }
    }
    if missing > 3 {
        fail(format!("misses {missing} of the oracle's {} traces in all", traces.len()));
    }
    if mode.starts_with("optimal") {
        let dups: Vec<String> = found.iter().filter(|(_, l)| l.len() > 1).map(|(_, l)| format!("lines {l:?}")).collect();
        if !dups.is_empty() {
            fail(format!("{} traces explored more than once: {}", dups.len(), dups.iter().take(5).cloned().collect::<Vec<_>>().join("; ")));
        }
    }
    // Bugs: the same set, each reported once (deadlocks by kind: several are allowed), each
    // schedule file reproducing its bug.
    let mut matched: BTreeMap<Bug, usize> = BTreeMap::new();
    for (kind, message, path) in &rep.violations {
        match truth.bugs.keys().find(|b| b.matches(kind, message)) {
            Some(b) => *matched.entry(b.clone()).or_default() += 1,
            None => fail(format!("reports `{kind}: {message}`, which the oracle never saw (oracle bugs: {:?})", truth.bug_set())),
        }
        let text = match std::fs::read_to_string(path) {
            Ok(t) => t,
            Err(e) => {
                fail(format!("the schedule of `{kind}: {message}` ({}) cannot be read: {e}", path.display()));
                continue;
            }
        };
        let s = match irs_verifier::schedule::parse(&text) {
            Ok(s) => s,
            Err(e) => {
                fail(format!("the schedule of `{kind}: {message}` ({}) does not parse: {e}", path.display()));
                continue;
            }
        };
        match ex.run(&s) {
            // A run can have several bugs: the first is its outcome, the rest come after it
            // (a thread that fails halts, the others go on).
            Ok(e) => match std::iter::once(e.outcome()).chain(&e.more_bugs).filter_map(oracle::bug_of).find(|b| b.matches(kind, message)) {
                Some(_) => {}
                None => fail(format!("the schedule of `{kind}: {message}` [{}] replays to `{}`", sched(&s), e.outcome())),
            },
            Err(err) => fail(format!("replaying the schedule of `{kind}: {message}`: {err}")),
        }
    }
    for (b, first) in &truth.bugs {
        match matched.get(b) {
            None => fail(format!("misses the bug `{b}` (oracle schedule [{}])", sched(first))),
            Some(&n) if n > 1 && b.kind != "deadlock" => fail(format!("reports `{b}` {n} times")),
            _ => {}
        }
    }
    let n = found.keys().filter(|k| traces.contains_key(*k)).count();
    (fails, n)
}
