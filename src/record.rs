//! `irs record --out FILE -- PROG ARGS`: run an instrumented program once in RECORD mode (DESIGN
//! §3, the events of a run) and make sure a complete trace comes out of it, whatever way the
//! program ends.

use crate::launch::{self, LaunchError};
use shared_proto::{Outcome, Trace};
use std::os::unix::process::ExitStatusExt;
use std::path::Path;

#[derive(Debug, thiserror::Error)]
pub enum RecordError {
    #[error("cannot write {path}: {reason}")]
    Unwritable { path: String, reason: String },
    #[error(transparent)]
    Launch(#[from] LaunchError),
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
    let out_abs = std::path::absolute(out).unwrap_or_else(|_| out.to_path_buf());
    // A stale trace from an earlier run must not pass for this run's.
    let _ = std::fs::remove_file(&out_abs);
    let status = launch::run(program, args, &[("IRS_MODE", "record".as_ref()), ("IRS_TRACE", out_abs.as_os_str())])?;
    if !out_abs.exists() {
        return Err(RecordError::NoTrace { program: program.to_string(), how: launch::describe(status) });
    }
    let mut trace = Trace::read(&out_abs)?;
    // The process status is the truth about how it ended; a violation found before stays.
    if let Some(sig) = status.signal() {
        if !matches!(trace.outcome, Outcome::Violation { .. }) && trace.outcome != Outcome::Signal(sig) {
            trace.outcome = Outcome::Signal(sig);
            trace.write(&out_abs)?;
        }
    }
    Ok(Recorded { trace, exit_code: launch::exit_code(status) })
}
