//! IRS end to end (DESIGN §1, §4 and §8 "Publishing"; issue 6): one background verifier per
//! program id publishes ever smaller prefixes to the program's segment while `irs run` runs the
//! program under them. The verifier keeps its state in `/dev/shm/irs-<id>.verifier` (JSON,
//! replaced atomically), which `irs status` and `irs run` read; a state whose process is gone
//! is *stale*: the last published prefix stays in force (it is safe) and `irs run` starts a new
//! verifier, which reuses the published table and only ever publishes smaller prefixes.

use crate::replay::{executor, ReplayError};
use irs_verifier::executor::Options as ExecOptions;
use serde::{Deserialize, Serialize};
use shared_proto::prefix_segment::{self, PrefixView};
use shared_proto::ProgramId;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

#[derive(Debug, thiserror::Error)]
pub enum ServiceError {
    #[error(transparent)]
    Replay(#[from] ReplayError),
    #[error("cannot start the verifier: {0}")]
    Spawn(std::io::Error),
    #[error("no prefix for {program} after {secs:.0} s (the verifier's log: {log})")]
    NoPrefix { program: String, secs: f64, log: String },
    #[error("the verifier of {program} stopped without publishing a prefix: {why}")]
    VerifierFailed { program: String, why: String },
}

/// What the background verifier says about itself.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
pub struct VerifierState {
    pub pid: u32,
    pub program: String,
    pub args: Vec<String>,
    /// `running`, `done` or `failed`.
    pub state: String,
    pub verdict: Option<String>,
    pub error: Option<String>,
    pub executions: u64,
    pub traces: u64,
    pub ssb: u64,
    /// Prefixes published so far (the first table included).
    pub published: usize,
    /// Constraints in the latest published prefix.
    pub constraints: Option<usize>,
    pub violations: Vec<String>,
    pub seconds: f64,
    /// Unix time of this state.
    pub updated: u64,
}

pub fn state_path(id: ProgramId) -> PathBuf {
    PathBuf::from(format!("/dev/shm/irs-{id}.verifier"))
}

pub fn log_path(id: ProgramId) -> PathBuf {
    std::env::temp_dir().join(format!("irs-{id}.verifier.log"))
}

pub fn now_unix() -> u64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_secs()).unwrap_or(0)
}

/// Write the state atomically (a reader never sees half of it).
pub fn write_state(path: &Path, s: &VerifierState) -> std::io::Result<()> {
    let tmp = path.with_extension(format!("tmp{}", std::process::id()));
    std::fs::write(&tmp, serde_json::to_vec(s).map_err(std::io::Error::other)?)?;
    std::fs::rename(&tmp, path)
}

pub fn read_state(id: ProgramId) -> Option<VerifierState> {
    serde_json::from_slice(&std::fs::read(state_path(id)).ok()?).ok()
}

/// Whether process `pid` exists and has not died (a killed verifier nobody has reaped yet is
/// a zombie: dead).
pub fn alive(pid: u32) -> bool {
    // SAFETY: signal 0 only checks that the process exists and may be signalled.
    if pid == 0 || unsafe { libc::kill(pid as i32, 0) } != 0 {
        return false;
    }
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        // The state follows the command name in parentheses.
        Ok(stat) => stat.rsplit_once(')').and_then(|(_, rest)| rest.split_whitespace().next()).is_none_or(|st| st != "Z" && st != "X"),
        Err(_) => false,
    }
}

/// The program id of an instrumented binary (its fork server says it in its hello).
pub fn program_id(program: &str, args: &[String]) -> Result<ProgramId, ServiceError> {
    let ex = executor(program, args, ExecOptions::default())?;
    Ok(ex.hello().program_id)
}

/// How the program's verification stands.
pub enum Status {
    /// No verifier has run for this program id.
    None,
    Running(VerifierState),
    Finished(VerifierState),
    /// The state says running, but its process is gone (killed, crashed).
    Stale(VerifierState),
}

pub fn status(id: ProgramId) -> Status {
    match read_state(id) {
        None => Status::None,
        Some(s) if s.state == "running" && !alive(s.pid) => Status::Stale(s),
        Some(s) if s.state == "running" => Status::Running(s),
        Some(s) => Status::Finished(s),
    }
}

/// The latest published prefix of the program, if its segment exists and is valid.
pub fn published_constraints(id: ProgramId) -> Option<usize> {
    let bytes = std::fs::read(prefix_segment::segment_path(id)).ok()?;
    let v = PrefixView::parse(&bytes, Some(id)).ok()?;
    Some(v.constraints_within(&v.cutoff(v.published() - 1)))
}

/// Start the background verifier of `program ARGS` unless one is running (or has finished):
/// `irs verify --publish --status-file …`, detached, its output in [`log_path`]. Returns
/// whether one was started.
pub fn ensure_verifier(id: ProgramId, program: &str, args: &[String]) -> Result<bool, ServiceError> {
    match status(id) {
        Status::Running(_) | Status::Finished(_) => return Ok(false),
        Status::None | Status::Stale(_) => {}
    }
    let exe = crate::launch::resolve_program(program).map_err(ReplayError::from)?;
    let exe = std::path::absolute(&exe).unwrap_or(exe);
    let irs = std::env::current_exe().map_err(ServiceError::Spawn)?;
    let log = std::fs::File::create(log_path(id)).map_err(ServiceError::Spawn)?;
    let err = log.try_clone().map_err(ServiceError::Spawn)?;
    let bugs = std::env::temp_dir().join(format!("irs-{id}.bugs"));
    let _ = std::fs::create_dir_all(&bugs);
    let mut cmd = std::process::Command::new(irs);
    cmd.args(["verify", "--publish", "--status-file"])
        .arg(state_path(id))
        .arg("--out-dir")
        .arg(&bugs)
        .arg("--")
        .arg(&exe)
        .args(args)
        .stdin(std::process::Stdio::null())
        .stdout(log)
        .stderr(err);
    // SAFETY: setsid in the child before exec: the verifier outlives this command and its
    // terminal's signals.
    unsafe {
        cmd.pre_exec(|| {
            libc::setsid();
            Ok(())
        });
    }
    cmd.spawn().map_err(ServiceError::Spawn)?;
    Ok(true)
}

/// Wait until the program's segment holds a prefix (or the verifier gave up).
pub fn wait_for_prefix(id: ProgramId, program: &str, limit: Duration) -> Result<(), ServiceError> {
    let started = Instant::now();
    loop {
        if published_constraints(id).is_some() {
            return Ok(());
        }
        if let Some(s) = read_state(id) {
            if s.state != "running" || !alive(s.pid) {
                if published_constraints(id).is_some() {
                    return Ok(());
                }
                let why = s.error.clone().unwrap_or_else(|| format!("it ended ({})", s.state));
                return Err(ServiceError::VerifierFailed { program: program.to_string(), why });
            }
        }
        if started.elapsed() > limit {
            return Err(ServiceError::NoPrefix { program: program.to_string(), secs: limit.as_secs_f64(), log: log_path(id).display().to_string() });
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// How `irs run` runs a program under IRS.
#[derive(Clone, Debug)]
pub struct RunOptions {
    pub repeat: u64,
    pub every: Duration,
    /// Run unconstrained (unverified) when no prefix exists yet, instead of waiting.
    pub no_wait: bool,
    pub wait_limit: Duration,
    pub chaos: bool,
    pub divergence: String,
}

/// One run of the program and how verification stood then.
#[derive(Clone, Debug)]
pub struct RunReport {
    pub index: u64,
    pub status: std::process::ExitStatus,
    pub micros: u64,
    /// Constraints in force when the run started; `None`: unverified run.
    pub constraints: Option<usize>,
    pub state: Option<VerifierState>,
}

/// What `irs run` did before the runs: started a verifier, or attached to one.
pub enum Attach {
    Started,
    Attached(Status),
}

/// `irs run -- prog ARGS` without a prefix: make sure the program's verifier runs, wait for
/// its first prefix, then run the program `repeat` times under the segment, `every` apart.
pub fn run_under_irs(
    program: &str,
    args: &[String],
    opts: &RunOptions,
    mut attached: impl FnMut(&Attach),
    mut each: impl FnMut(&RunReport),
) -> Result<Vec<RunReport>, ServiceError> {
    let id = program_id(program, args)?;
    if ensure_verifier(id, program, args)? {
        attached(&Attach::Started);
    } else {
        attached(&Attach::Attached(status(id)));
    }
    let verified = if opts.no_wait {
        published_constraints(id).is_some()
    } else {
        wait_for_prefix(id, program, opts.wait_limit)?;
        true
    };
    let mut out = Vec::new();
    for index in 0..opts.repeat {
        if index > 0 && !opts.every.is_zero() {
            std::thread::sleep(opts.every);
        }
        let constraints = if verified || published_constraints(id).is_some() { published_constraints(id) } else { None };
        let mut env: Vec<(&str, &std::ffi::OsStr)> = Vec::new();
        if constraints.is_some() {
            env.extend([("IRS_MODE", "enforce".as_ref()), ("IRS_PREFIX", "installed".as_ref()), ("IRS_DIVERGENCE", opts.divergence.as_ref())]);
        }
        if opts.chaos {
            env.push(("IRS_CHAOS", "1".as_ref()));
        }
        let started = Instant::now();
        let status = crate::launch::run(program, args, &env).map_err(ReplayError::from)?;
        let report = RunReport { index, status, micros: started.elapsed().as_micros() as u64, constraints, state: read_state(id) };
        each(&report);
        out.push(report);
    }
    Ok(out)
}
