//! `irs verify`: exhaustive exploration of an instrumented program's schedules by k-partial QPOR
//! (DESIGN §8; QPOR paper 000 Alg. 1, §5), with the result for people and as one JSON object.

use crate::replay::{executor, ReplayError};
use irs_verifier::executor::Options as ExecOptions;
use crate::service::publish::Publisher;
use crate::service::state::{now_unix, write_state, VerifierState};
use irs_verifier::qpor::{self, Report, Stats, Verifier};
use irs_verifier::schedule;
use irs_verifier::scratch_dir::{Kind, ScratchDir};
use shared_proto::equivalence::Equivalence;
use shared_proto::{Outcome, ThreadId};
use std::io::{Seek, Write};
use std::path::{Path, PathBuf};

#[derive(Debug, thiserror::Error)]
pub enum VerifyCliError {
    #[error(transparent)]
    Replay(#[from] ReplayError),
    #[error(transparent)]
    Verify(#[from] qpor::VerifyError),
    #[error("cannot write {path}: {reason}")]
    Write { path: String, reason: String },
    #[error("cannot make a scratch directory in {dir}: {reason}")]
    Scratch { dir: String, reason: String },
}

/// What `irs verify` found: the report and where each bug's schedule was written.
pub struct Outcomes {
    pub report: Report,
    pub schedule_files: Vec<PathBuf>,
    pub peak_rss_kb: u64,
    /// CPU time of the verifier's own process (not the program's), seconds.
    pub cpu_seconds: f64,
    /// With `--publish`: what the prefix is anchored on, when it is not the default schedule
    /// (or why it is, when another was asked for).
    pub anchor_note: Option<String>,
    /// The files the program opened for reading in the executions explored (part of the input,
    /// DESIGN §4 "Inputs"), as `PATH (N bytes)` or `PATH (absent)`.
    pub files_read: Vec<String>,
    /// `--max-threads`, if given.
    pub max_threads: Option<u32>,
}

impl Outcomes {
    /// `safe` only when every execution of the program for this input was explored with no
    /// limit hit and no bound on what it explored; `safe-within-bounds` when every execution
    /// within the bounds the report names (the values of `__VERIFIER_nondet_*`) was; otherwise
    /// `violation` or `incomplete`. Never stronger than what was explored.
    pub fn verdict(&self) -> &'static str {
        if !self.report.bugs.is_empty() {
            "violation"
        } else if self.report.stopped.is_some() || !self.report.nonterminating.is_empty() {
            "incomplete"
        } else if !self.report.bounds.is_empty() {
            "safe-within-bounds"
        } else {
            "safe"
        }
    }

    /// What the verdict covers, in a sentence.
    pub fn covers(&self) -> String {
        let input = if self.files_read.is_empty() {
            "this input (the arguments, environment, working directory and standard input it ran with)".to_string()
        } else {
            format!("this input (the arguments, environment, working directory and standard input it ran with, and the files it read as they were read: {})", self.files_read.join(", "))
        };
        match self.verdict() {
            "violation" => format!("a bug found in an execution for {input}; the schedule files reproduce it"),
            "incomplete" => {
                let why = match (&self.report.stopped, self.report.nonterminating.first()) {
                    (Some(s), _) => s.clone(),
                    (None, Some(b)) => format!("an execution did not end ({})", b.outcome),
                    (None, None) => "a limit was hit".into(),
                };
                format!("only the executions explored before the exploration stopped ({why}); not every execution for {input}")
            }
            "safe-within-bounds" => format!("every execution for {input} within these bounds: {}", self.report.bounds.join("; ")),
            _ => format!("every execution for {input}"),
        }
    }

    /// The verdict line of the text report: the verdict, and for anything but plain `safe` and
    /// `violation` what restricts it.
    pub fn verdict_line(&self) -> String {
        match self.verdict() {
            "incomplete" => match (&self.report.stopped, self.report.nonterminating.first()) {
                (Some(s), _) => format!("verdict: incomplete ({s})"),
                (None, Some(b)) => format!("verdict: incomplete (an execution did not end: {})", b.outcome),
                (None, None) => "verdict: incomplete".into(),
            },
            "safe-within-bounds" => format!("verdict: safe-within-bounds ({})", self.report.bounds.join("; ")),
            v => format!("verdict: {v}"),
        }
    }

    pub fn exit_code(&self) -> u8 {
        if self.report.bugs.is_empty() { 0 } else { 1 }
    }
}

/// The kind of a bug as `--json` names it.
pub fn bug_kind(o: &Outcome) -> &'static str {
    match o {
        Outcome::Violation { kind, .. } => kind.name(),
        Outcome::Signal(_) => "crash",
        Outcome::Deadlock { .. } => "deadlock",
        Outcome::Timeout { .. } => "timeout",
        Outcome::EventLimit { .. } => "event-limit",
        _ => "other",
    }
}

pub fn bug_message(o: &Outcome) -> String {
    match o {
        Outcome::Violation { message, .. } => message.clone(),
        Outcome::Signal(s) => format!("signal {s}"),
        Outcome::Deadlock { waiting } => waiting.join("; "),
        other => other.to_string(),
    }
}

/// CPU time (user and system) this process has used so far, not counting its children.
pub fn own_cpu_seconds() -> f64 {
    // SAFETY: getrusage fills the struct we pass.
    let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: as above, for this process.
    unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut ru) };
    let secs = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 / 1e6;
    secs(ru.ru_utime) + secs(ru.ru_stime)
}

/// Peak resident set of this process, from /proc (kB).
pub fn peak_rss_kb() -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| s.lines().find(|l| l.starts_with("VmHWM:")).and_then(|l| l.split_whitespace().nth(1)?.parse().ok()))
        .unwrap_or(0)
}

/// What `irs verify` tells as it goes: progress, the schedules file, publishing.
struct CliHooks<'a, P: FnMut(&Stats)> {
    progress: P,
    traces_file: Option<std::io::BufWriter<std::fs::File>>,
    write_failed: Option<std::io::Error>,
    publisher: Option<&'a mut Publisher>,
    /// `--status-file`: the state the background verifier keeps for `irs status`/`irs run`.
    state: Option<(PathBuf, VerifierState)>,
}

impl<P: FnMut(&Stats)> CliHooks<'_, P> {
    fn save_state(&mut self, stats: Option<&Stats>) {
        let Some((path, st)) = self.state.as_mut() else { return };
        if let Some(s) = stats {
            st.executions = s.executions;
            st.traces = s.traces;
            st.ssb = s.ssb;
            st.seconds = s.elapsed.as_secs_f64();
        }
        if let Some(p) = self.publisher.as_ref() {
            st.published = p.log.len();
            st.constraints = p.log.last().map(|l| l.constraints);
            if st.error.is_none() {
                st.error = p.error.clone();
            }
        }
        st.updated = now_unix();
        let _ = write_state(path, st);
    }
}

impl<P: FnMut(&Stats)> qpor::Hooks for CliHooks<'_, P> {
    fn progress(&mut self, stats: &Stats) {
        (self.progress)(stats);
        self.save_state(Some(stats));
    }
    fn trace(&mut self, schedule: &[ThreadId], outcome: &Outcome) {
        if let Some(f) = self.traces_file.as_mut() {
            if let Err(e) = f.write_all(schedule::format(schedule).as_bytes()) {
                self.write_failed.get_or_insert(e);
            }
        }
        if let Some((_, st)) = self.state.as_mut() {
            let msg = outcome.to_string();
            if outcome.is_bug() && !st.violations.contains(&msg) {
                st.violations.push(msg);
            }
        }
    }
    fn restarted(&mut self, _why: &str) {
        // The schedules told so far will be told again.
        if let Some(f) = self.traces_file.as_mut() {
            let emptied = f.flush().and_then(|()| f.get_mut().set_len(0)).and_then(|()| f.get_mut().rewind());
            if let Err(e) = emptied {
                self.write_failed.get_or_insert(e);
            }
        }
    }
    fn first(&mut self, first: &irs_verifier::executor::Execution) {
        if let Some(p) = self.publisher.as_mut() {
            p.first(&first.trace);
        }
        self.save_state(None);
    }
    fn safe_prefix(&mut self, steps: usize, stats: &Stats) {
        if let Some(p) = self.publisher.as_mut() {
            p.safe(steps, stats.traces);
        }
        self.save_state(Some(stats));
    }
}

/// The thread bound `irs verify` applies by itself to such a program (each thread creates at
/// most this many threads), when `--max-threads` is not given: a bounded verdict that names it
/// rather than no verdict at all.
pub const DEFAULT_MAX_THREADS: u32 = 2;

#[allow(clippy::too_many_arguments)]
pub fn verify(
    program: &str,
    args: &[String],
    opts: qpor::Options,
    exec: ExecOptions,
    out_dir: &Path,
    schedules_out: Option<&Path>,
    mut publisher: Option<&mut Publisher>,
    status_file: Option<&Path>,
    progress: impl FnMut(&Stats),
) -> Result<Outcomes, VerifyCliError> {
    let mut state = status_file.map(|p| {
        let st = VerifierState {
            pid: std::process::id(),
            program: program.to_string(),
            args: args.to_vec(),
            state: "running".into(),
            updated: now_unix(),
            ..Default::default()
        };
        let _ = write_state(p, &st);
        (p.to_path_buf(), st)
    });
    // Files the program opens for reading are captured at their first open and every execution
    // reads the capture (DESIGN §4 "Inputs"): in the input's directory for a stored input, else in
    // a directory of this verification's own.
    let own_captures = match exec.input_files {
        Some(_) => None,
        None => Some(ScratchDir::create(Kind::Files).map_err(|e| VerifyCliError::Scratch { dir: std::env::temp_dir().display().to_string(), reason: e.to_string() })?),
    };
    let mut exec = exec;
    if let Some(d) = &own_captures {
        exec.input_files = Some(d.path().join("captures"));
    }
    let captures = shared_proto::input_files::FileCaptures::new(exec.input_files.clone().expect("set above"));
    let mut progress = progress;
    let mut result = verify_inner(program, args, opts.clone(), exec.clone(), out_dir, schedules_out, publisher.as_deref_mut(), &mut state, &mut progress);
    if exec.max_threads.is_none() && matches!(&result, Err(e) if e.to_string().contains(shared_proto::explore_protocol::THREAD_CAPACITY)) {
        // Threads created without end: a default thread bound, named in the verdict.
        let bounded = ExecOptions { max_threads: Some(DEFAULT_MAX_THREADS), ..exec };
        result = verify_inner(program, args, opts, bounded, out_dir, schedules_out, publisher.as_deref_mut(), &mut state, &mut progress).map(|mut o| {
            for b in o.report.bounds.iter_mut().filter(|b| b.starts_with("each thread creates at most")) {
                b.push_str(", a default bound: the program creates more threads than EXPLORE's 64 (choose another with --max-threads N)");
            }
            o
        });
    }
    let files_read = captures.summary();
    drop(own_captures);
    let result = result.map(|o| Outcomes { files_read, ..o });
    if let Some((path, st)) = state.as_mut() {
        match &result {
            Ok(o) => {
                st.state = "done".into();
                st.verdict = Some(o.verdict().into());
                st.executions = o.report.stats.executions;
                st.traces = o.report.stats.traces;
                st.ssb = o.report.stats.ssb;
                st.seconds = o.report.stats.elapsed.as_secs_f64();
                st.violations = o.report.bugs.iter().map(|b| b.outcome.to_string()).collect();
                st.covers = Some(o.covers());
            }
            Err(e) => {
                st.state = "failed".into();
                st.error = Some(e.to_string());
            }
        }
        if let Some(p) = publisher.as_ref() {
            st.published = p.log.len();
            st.constraints = p.log.last().map(|l| l.constraints);
        }
        st.updated = now_unix();
        let _ = write_state(path, st);
    }
    result
}

#[allow(clippy::too_many_arguments)]
fn verify_inner(
    program: &str,
    args: &[String],
    mut opts: qpor::Options,
    exec: ExecOptions,
    out_dir: &Path,
    schedules_out: Option<&Path>,
    mut publisher: Option<&mut Publisher>,
    state: &mut Option<(PathBuf, VerifierState)>,
    progress: impl FnMut(&Stats),
) -> Result<Outcomes, VerifyCliError> {
    let spin_bound = exec.spin_bound;
    let max_threads = exec.max_threads;
    let mut ex = executor(program, args, exec)?;
    let write_err = |p: &Path, e: std::io::Error| VerifyCliError::Write { path: p.display().to_string(), reason: e.to_string() };
    let traces_file = match schedules_out {
        Some(p) => Some(std::io::BufWriter::new(std::fs::File::create(p).map_err(|e| write_err(p, e))?)),
        None => None,
    };
    let mut anchor_note = None;
    if let Some(p) = publisher.as_mut() {
        // The published table is the first execution's: it must be a correct one.
        let segment = p.segment_path(ex.hello().program_id);
        let chosen = crate::service::anchor::choose(&mut ex, &segment, p.anchor, p.equivalence, program, args)?;
        anchor_note = chosen.note;
        opts.first_schedule = chosen.first_schedule;
        if let Some((path, st)) = state.as_mut() {
            st.anchor = anchor_note.clone();
            let _ = write_state(path, st);
        }
        if let Some(e) = chosen.error {
            p.error = Some(e);
            // Said at once, not when the exploration ends (it may not, for a program explored
            // within a bound): a run waiting for this input's first prefix stops waiting for one
            // that will not come.
            if let Some((path, st)) = state.as_mut() {
                st.error = p.error.clone();
                st.updated = now_unix();
                let _ = write_state(path, st);
            }
        }
    }
    let mut hooks = CliHooks { progress, traces_file, write_failed: None, publisher, state: state.take() };
    let explored = Verifier::new(&mut ex, opts).explore(&mut hooks);
    *state = hooks.state.take();
    let mut report = explored?;
    if let Some(k) = spin_bound {
        report.bounds.push(format!("a loop that only reads iterates at most {k} times in a row (--spin-bound)"));
    }
    if let (Some(p), Some(e)) = (schedules_out, hooks.write_failed.take()) {
        return Err(write_err(p, e));
    }
    if let (Some(p), Some(mut f)) = (schedules_out, hooks.traces_file.take()) {
        f.flush().map_err(|e| write_err(p, e))?;
    }
    if !report.bugs.is_empty() || !report.nonterminating.is_empty() {
        std::fs::create_dir_all(out_dir).map_err(|e| write_err(out_dir, e))?;
    }
    let stem = Path::new(program).file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_else(|| "prog".into());
    let mut schedule_files = Vec::new();
    for (i, b) in report.bugs.iter().chain(&report.nonterminating).enumerate() {
        let path = out_dir.join(format!("{stem}.{}{i}.schedule", bug_kind(&b.outcome)));
        std::fs::write(&path, schedule::format(&b.schedule)).map_err(|e| write_err(&path, e))?;
        schedule_files.push(path);
    }
    Ok(Outcomes { report, schedule_files, peak_rss_kb: peak_rss_kb(), cpu_seconds: own_cpu_seconds(), anchor_note, files_read: Vec::new(), max_threads })
}

/// The one JSON object `--json` prints.
pub fn to_json(o: &Outcomes, k: Option<usize>) -> serde_json::Value {
    let s = &o.report.stats;
    let secs = s.elapsed.as_secs_f64();
    let bugs: Vec<serde_json::Value> = o
        .report
        .bugs
        .iter()
        .chain(&o.report.nonterminating)
        .zip(&o.schedule_files)
        .map(|(b, f)| {
            serde_json::json!({
                "kind": bug_kind(&b.outcome),
                "message": bug_message(&b.outcome),
                "schedule": f.display().to_string(),
                "executions": b.count,
            })
        })
        .collect();
    serde_json::json!({
        "traces": s.traces,
        "ssb": s.ssb,
        "executions": s.executions,
        "runs": s.runs,
        "snapshots": s.snapshots,
        "events": s.events_created,
        "events_peak": s.events_peak,
        "seconds": secs,
        "executor_seconds": s.executor_micros as f64 / 1e6,
        "program_seconds": s.program_micros as f64 / 1e6,
        "program_setup_seconds": s.setup_micros as f64 / 1e6,
        "walk_behind_seconds": s.walk_behind_micros as f64 / 1e6,
        "backtrack_seconds": s.backtrack_micros as f64 / 1e6,
        "prune_seconds": s.prune_micros as f64 / 1e6,
        "race_free_words": s.race_free_words,
        "racy_words": s.racy_words,
        "restarts": s.restarts,
        "guarded_words": s.guarded_words,
        "discarded": s.discarded,
        "max_threads": o.max_threads,
        "thread_bound_cuts": s.thread_bound_cuts,
        "races": o.report.races,
        "exec_per_sec": if secs > 0.0 { s.runs as f64 / secs } else { 0.0 },
        "peak_rss_kb": o.peak_rss_kb,
        "verifier_cpu_seconds": o.cpu_seconds,
        "verdict": o.verdict(),
        "covers": o.covers(),
        "bounds": o.report.bounds,
        "stopped": o.report.stopped,
        "violations": bugs,
        "k": match k { Some(k) => serde_json::json!(k), None => serde_json::json!("optimal") },
        "equivalence": if s.reads_commute { "reads-commute" } else { "mazurkiewicz" },
        "dependence": if s.reads_commute {
            "memory words (4-byte, by logical address; two reads commute), mutexes, threads"
        } else {
            "memory words (4-byte, by logical address; reads included), mutexes, threads"
        },
    })
}

/// Which equivalence the traces were counted in, for the text report: the one asked for, or
/// Mazurkiewicz where reads-commute was given up (too many readers found late).
pub fn equivalence_text(s: &Stats, asked: Equivalence) -> String {
    match (asked, s.reads_commute) {
        (Equivalence::ReadsCommute, true) => "with reads commuting (--equivalence reads-commute)".into(),
        (Equivalence::ReadsCommute, false) => format!("with reads of words that are objects ordered (reads-commute given up after {} restarts for readers found late)", s.restarts),
        (Equivalence::Mazurkiewicz, _) => "with every access to a word ordered (--equivalence mazurkiewicz)".into(),
    }
}

/// The `published` field of `--json` with `--publish`.
pub fn published_json(p: &Publisher) -> serde_json::Value {
    serde_json::json!({
        "segment": p.segment.as_ref().map(|s| s.display().to_string()),
        "error": p.error,
        "reused": p.reused,
        "log": p.log.iter().map(|s| serde_json::json!({
            "steps": s.steps,
            "cut": s.cut,
            "constraints": s.constraints,
            "seconds": s.seconds,
            "traces": s.traces,
        })).collect::<Vec<_>>(),
    })
}
