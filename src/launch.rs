//! Starting an instrumented program in one of the runtime's modes and waiting for it, as
//! `irs record` and `irs run` do: the program keeps its stdin, stdout and stderr; Ctrl-C
//! reaches it (it ends its own way) while we wait.

use irs_instrument::instrumented_binary;
use std::os::unix::process::ExitStatusExt;
use std::path::PathBuf;
use std::process::{Command, ExitStatus};

#[derive(Debug, thiserror::Error)]
pub enum LaunchError {
    #[error("{0}: no such program")]
    NoProgram(String),
    #[error(transparent)]
    Probe(#[from] instrumented_binary::ProbeError),
    #[error("cannot run {program}: {source}")]
    Spawn { program: String, source: std::io::Error },
}

/// Resolve a program name as a shell would: with a `/` it is a path, else it is searched in PATH.
pub fn resolve_program(program: &str) -> Result<PathBuf, LaunchError> {
    let p = if program.contains('/') { Some(PathBuf::from(program)) } else { irs_instrument::toolchain::find_in_path(program) };
    p.filter(|p| p.is_file()).ok_or_else(|| LaunchError::NoProgram(program.to_string()))
}

/// Run `program ARGS` (built by `irs cc`) with `env` added, and wait for it.
pub fn run(program: &str, args: &[String], env: &[(&str, &std::ffi::OsStr)]) -> Result<ExitStatus, LaunchError> {
    let exe = resolve_program(program)?;
    instrumented_binary::check(&exe)?;
    let mut cmd = Command::new(&exe);
    cmd.args(args);
    for (k, v) in env {
        cmd.env(k, v);
    }
    let child = cmd.spawn().map_err(|source| LaunchError::Spawn { program: program.to_string(), source })?;
    wait_for(child).map_err(|source| LaunchError::Spawn { program: program.to_string(), source })
}

/// Wait for a program started with the terminal's stdin: Ctrl-C reaches it (it ends its own
/// way) while this process ignores it.
pub fn wait_for(mut child: std::process::Child) -> std::io::Result<ExitStatus> {
    // SAFETY: ignoring SIGINT in this process only while we wait; restored right after.
    let old = unsafe { libc::signal(libc::SIGINT, libc::SIG_IGN) };
    let status = child.wait();
    // SAFETY: restoring the previous disposition.
    unsafe { libc::signal(libc::SIGINT, old) };
    status
}

/// The exit code a wrapper reports for `status`: the program's own, or 128 + the signal.
pub fn exit_code(status: ExitStatus) -> i32 {
    match (status.code(), status.signal()) {
        (Some(c), _) => c,
        (None, Some(s)) => 128 + s,
        _ => 1,
    }
}

/// `exit N` or `signal N`.
pub fn describe(status: ExitStatus) -> String {
    match (status.code(), status.signal()) {
        (Some(c), _) => format!("exit {c}"),
        (None, Some(s)) => format!("signal {s}"),
        _ => "unknown".into(),
    }
}
