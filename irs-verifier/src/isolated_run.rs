//! One run of the program with real threads that the verifier makes (RECORD for the natural
//! order of events, `natural_run`; ENFORCE under a candidate prefix, `anchor_trial`), isolated
//! as the explored executions are (DESIGN §7, "an explored execution does no harm";
//! docs/src/sandbox.md): the runtime enters the namespaces and a private view of the file
//! system before `main`, in which only a fresh scratch directory of the verifier's is real
//! (where the trace is written or the prefix read). It runs on the input the executor's options
//! describe (environment, working directory, standard input) and is killed, its whole process
//! group, at the per-execution time limit.

use crate::executor::Options;
use crate::scratch_dir::{disabled_by_environment, Kind, ScratchDir};
use std::ffi::OsStr;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{ExitStatus, Stdio};
use std::time::{Duration, Instant};

/// Why a run did not end normally.
#[derive(Debug, thiserror::Error)]
pub enum IsolatedRunError {
    #[error("{0}")]
    System(String),
    #[error("the run did not end within {0:?}")]
    TimedOut(Duration),
}

/// A scratch directory for isolated runs: the one real directory they see. Removed, with what
/// the runs left there, when dropped.
pub struct Scratch {
    dir: ScratchDir,
}

impl Scratch {
    pub fn new() -> Result<Scratch, IsolatedRunError> {
        Ok(Scratch { dir: ScratchDir::create(Kind::Sandbox).map_err(|e| IsolatedRunError::System(format!("making a scratch directory: {e}")))? })
    }

    pub fn path(&self, name: &str) -> PathBuf {
        self.dir.path().join(name)
    }
}

/// How a run ended and how long it took.
pub struct Ran {
    pub status: ExitStatus,
    /// From spawning it to its end, isolation's set-up included.
    pub wall: Duration,
    /// From the runtime's start to the program's `exit`, as the runtime measured it (`None`:
    /// it ended otherwise).
    pub inside: Option<Duration>,
}

/// Run `program ARGS` in `mode` with the variables `env` (paths in `scratch`), isolated unless
/// `options` says otherwise; its output is discarded.
pub fn run(program: &Path, args: &[String], options: &Options, scratch: &Scratch, mode: &str, env: &[(&str, &OsStr)]) -> Result<Ran, IsolatedRunError> {
    let sys = |what: &str, e: std::io::Error| IsolatedRunError::System(format!("{what}: {e}"));
    let stdin_path = scratch.path("stdin");
    std::fs::write(&stdin_path, &options.stdin).map_err(|e| sys("writing the standard input", e))?;
    let stdin = std::fs::File::open(&stdin_path).map_err(|e| sys("opening the standard input", e))?;
    let mut cmd = options.command(program);
    for v in ["IRS_PREFIX", "IRS_TRACE", "IRS_CHAOS", "IRS_SERIAL", "IRS_DIVERGENCE", shared_proto::input_files::ENV_DIR, shared_proto::explore_protocol::ENV_SANDBOX_DIR] {
        cmd.env_remove(v);
    }
    let elapsed = scratch.path("elapsed");
    let _ = std::fs::remove_file(&elapsed);
    cmd.args(args).env("IRS_MODE", mode).env("IRS_ELAPSED_FILE", &elapsed).envs(env.iter().copied()).stdin(Stdio::from(stdin)).stdout(Stdio::null()).stderr(Stdio::null()).process_group(0);
    let sandbox = if options.sandbox && !disabled_by_environment() {
        let dir = ScratchDir::create(Kind::Sandbox).map_err(|e| sys("making the sandbox directory", e))?;
        cmd.env(shared_proto::explore_protocol::ENV_SANDBOX_DIR, dir.path());
        Some(dir)
    } else {
        None
    };
    let started = Instant::now();
    let mut child = cmd.spawn().map_err(|e| sys(&format!("starting {}", program.display()), e))?;
    let status = loop {
        match child.try_wait().map_err(|e| sys("waiting for the run", e))? {
            Some(st) => break st,
            None if started.elapsed() >= options.timeout => {
                // SAFETY: signalling the process group the child leads (its own, made at spawn);
                // the sandboxed program dies with its keeper (parent-death signal).
                unsafe { libc::kill(-(child.id() as i32), libc::SIGKILL) };
                let _ = child.kill();
                let _ = child.wait();
                return Err(IsolatedRunError::TimedOut(options.timeout));
            }
            None => std::thread::sleep(Duration::from_micros(500)),
        }
    };
    let wall = started.elapsed();
    drop(sandbox);
    let inside = std::fs::read_to_string(&elapsed).ok().and_then(|t| t.trim().parse().ok()).map(Duration::from_micros);
    Ok(Ran { status, wall, inside })
}
