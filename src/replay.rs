//! `irs replay`: one controlled execution of an instrumented program, following a schedule (then
//! the default policy), with its trace and outcome (DESIGN §7). It replays; it never explores.

use irs_instrument::instrumented_binary;
use irs_verifier::executor::{ExecError, Execution, Executor, Options, Policy};
use irs_verifier::schedule;
use shared_proto::ThreadId;
use std::path::Path;

#[derive(Debug, thiserror::Error)]
pub enum ReplayError {
    #[error(transparent)]
    Launch(#[from] crate::launch::LaunchError),
    #[error(transparent)]
    Probe(#[from] instrumented_binary::ProbeError),
    #[error("cannot read schedule {path}: {reason}")]
    ScheduleFile { path: String, reason: String },
    #[error(transparent)]
    Schedule(#[from] schedule::ScheduleError),
    #[error(transparent)]
    Exec(#[from] ExecError),
    #[error(transparent)]
    Trace(#[from] shared_proto::TraceError),
    #[error("--snapshot-at: {0}")]
    Snapshot(String),
}

pub fn read_schedule(path: &Path) -> Result<Vec<ThreadId>, ReplayError> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| ReplayError::ScheduleFile { path: path.display().to_string(), reason: e.to_string() })?;
    Ok(schedule::parse(&text)?)
}

/// Start an executor for `program ARGS` after checking it is an instrumented binary.
pub fn executor(program: &str, args: &[String], options: Options) -> Result<Executor, ReplayError> {
    let exe = crate::launch::resolve_program(program)?;
    instrumented_binary::check(&exe)?;
    Ok(Executor::start(&exe, args, options)?)
}

pub fn replay(program: &str, args: &[String], schedule: &[ThreadId], policy: Policy, options: Options, trace_out: Option<&Path>) -> Result<Execution, ReplayError> {
    let mut ex = executor(program, args, options)?;
    let run = ex.run_with_policy(schedule, policy)?;
    if let Some(out) = trace_out {
        run.trace.write(out)?;
    }
    Ok(run)
}

/// The exit code of a checking command for one outcome: 0 nothing found (an execution an
/// assumption discards included, and one cut at the thread bound), 1 a bug, 2 neither (the
/// schedule was infeasible, or the run timed out).
pub fn exit_code(outcome: &shared_proto::Outcome) -> u8 {
    use shared_proto::Outcome::*;
    match outcome {
        Exit(_) | Discarded | ThreadBound { .. } => 0,
        Violation { .. } | Signal(_) | Deadlock { .. } => 1,
        Infeasible { .. } | Timeout { .. } | EventLimit { .. } | Incomplete => 2,
    }
}
