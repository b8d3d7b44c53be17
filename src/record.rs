//! `irs record --out FILE -- PROG ARGS`: run an instrumented program once in RECORD mode
//! (issue 2) and make sure a complete trace comes out of it, whatever way the program ends.

use irs_instrument::instrumented_binary;
use shared_proto::{Outcome, Trace};
use std::os::unix::process::ExitStatusExt;
use std::path::{Path, PathBuf};
use std::process::Command;

#[derive(Debug, thiserror::Error)]
pub enum RecordError {
    #[error("cannot write {path}: {reason}")]
    Unwritable { path: String, reason: String },
    #[error("{0}: no such program")]
    NoProgram(String),
    #[error(transparent)]
    Probe(#[from] instrumented_binary::ProbeError),
    #[error("cannot run {program}: {source}")]
    Spawn { program: String, source: std::io::Error },
    #[error("{program} ended ({how}) without writing a trace")]
    NoTrace { program: String, how: String },
    #[error(transparent)]
    Trace(#[from] shared_proto::TraceError),
}

/// What a recorded run produced.
pub struct Recorded {
    pub trace: Trace,
    /// The exit code `irs record` should exit with: the program's own, or 128 + signal.
    pub exit_code: i32,
}

/// Resolve a program name as a shell would: with a `/` it is a path, else it is searched in PATH.
pub fn resolve_program(program: &str) -> Result<PathBuf, RecordError> {
    let p = if program.contains('/') {
        Some(PathBuf::from(program))
    } else {
        irs_instrument::toolchain::find_in_path(program)
    };
    p.filter(|p| p.is_file()).ok_or_else(|| RecordError::NoProgram(program.to_string()))
}

fn check_writable(out: &Path) -> Result<(), RecordError> {
    let unwritable = |reason: String| RecordError::Unwritable { path: out.display().to_string(), reason };
    if out.is_dir() {
        return Err(unwritable("it is a directory".into()));
    }
    let existed = out.exists();
    std::fs::OpenOptions::new().append(true).create(true).open(out).map_err(|e| unwritable(e.to_string()))?;
    if !existed {
        let _ = std::fs::remove_file(out);
    }
    Ok(())
}

pub fn record(out: &Path, program: &str, args: &[String]) -> Result<Recorded, RecordError> {
    check_writable(out)?;
    let exe = resolve_program(program)?;
    instrumented_binary::check(&exe)?;
    let out_abs = std::path::absolute(out).unwrap_or_else(|_| out.to_path_buf());
    // A stale trace from an earlier run must not pass for this run's.
    let _ = std::fs::remove_file(&out_abs);
    let mut child = Command::new(&exe)
        .args(args)
        .env("IRS_MODE", "record")
        .env("IRS_TRACE", &out_abs)
        .spawn()
        .map_err(|source| RecordError::Spawn { program: program.to_string(), source })?;
    // Ctrl-C reaches the program too; it writes its trace and ends, and we report it.
    // SAFETY: ignoring SIGINT in this process only; restored right after the wait.
    let old = unsafe { libc::signal(libc::SIGINT, libc::SIG_IGN) };
    let status = child.wait();
    // SAFETY: restoring the previous disposition.
    unsafe { libc::signal(libc::SIGINT, old) };
    let status = status.map_err(|source| RecordError::Spawn { program: program.to_string(), source })?;
    let (how, exit_code) = match (status.code(), status.signal()) {
        (Some(c), _) => (format!("exit {c}"), c),
        (None, Some(s)) => (format!("signal {s}"), 128 + s),
        _ => ("unknown".to_string(), 1),
    };
    if !out_abs.exists() {
        return Err(RecordError::NoTrace { program: program.to_string(), how });
    }
    let mut trace = Trace::read(&out_abs)?;
    // The process status is the truth about how it ended; a violation found before stays.
    if let Some(sig) = status.signal() {
        if !matches!(trace.outcome, Outcome::Violation { .. }) && trace.outcome != Outcome::Signal(sig) {
            trace.outcome = Outcome::Signal(sig);
            trace.write(&out_abs)?;
        }
    }
    Ok(Recorded { trace, exit_code })
}
