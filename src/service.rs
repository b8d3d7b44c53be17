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

/// The prefix in force for a program: how many cutoffs its segment's log holds, the latest one,
/// and the constraints within it.
#[derive(Clone, Debug, PartialEq)]
pub struct InForce {
    pub published: usize,
    pub cut: Vec<u32>,
    pub constraints: usize,
}

/// The program's latest published prefix, if its segment exists and is valid.
pub fn in_force(id: ProgramId) -> Option<InForce> {
    let bytes = std::fs::read(prefix_segment::segment_path(id)).ok()?;
    let v = PrefixView::parse(&bytes, Some(id)).ok()?;
    let cut = v.cutoff(v.published() - 1);
    Some(InForce { published: v.published(), constraints: v.constraints_within(&cut), cut })
}

/// Constraints in the latest published prefix of the program, if its segment exists and is valid.
pub fn published_constraints(id: ProgramId) -> Option<usize> {
    in_force(id).map(|p| p.constraints)
}

/// Where the background verifier of a program writes the schedules of the bugs it finds.
pub fn bugs_dir(id: ProgramId) -> PathBuf {
    std::env::temp_dir().join(format!("irs-{id}.bugs"))
}

/// Kill a verifier that [`read_state`] says runs, if its process is still one of ours running
/// `irs verify --publish` (a recycled pid is left alone), and reap it if it is our child.
pub fn stop_verifier(state: &VerifierState) {
    if !alive(state.pid) {
        return;
    }
    let cmdline = std::fs::read(format!("/proc/{}/cmdline", state.pid)).unwrap_or_default();
    let args: Vec<&[u8]> = cmdline.split(|&b| b == 0).collect();
    if !(args.contains(&&b"verify"[..]) && args.contains(&&b"--publish"[..])) {
        return;
    }
    // SAFETY: signals a process we just identified as a verifier of this user's program (the
    // kill fails for other users' processes); waitpid with WNOHANG only reaps it if it is our
    // child and has ended, and fails harmlessly otherwise.
    unsafe {
        libc::kill(state.pid as i32, libc::SIGKILL);
        let started = Instant::now();
        while alive(state.pid) && started.elapsed() < Duration::from_secs(2) {
            libc::waitpid(state.pid as i32, std::ptr::null_mut(), libc::WNOHANG);
            std::thread::sleep(Duration::from_millis(5));
        }
        libc::waitpid(state.pid as i32, std::ptr::null_mut(), libc::WNOHANG);
    }
}

/// Forget the program's verification: stop its verifier if one runs, and remove its segment,
/// its state, the verifier's log and its bug schedules. The next `irs run` starts from the
/// first prefix again.
pub fn reset(id: ProgramId) {
    if let Some(s) = read_state(id) {
        stop_verifier(&s);
    }
    let _ = std::fs::remove_file(prefix_segment::segment_path(id));
    let _ = std::fs::remove_file(state_path(id));
    let _ = std::fs::remove_file(log_path(id));
    let _ = std::fs::remove_dir_all(bugs_dir(id));
}

/// Start the background verifier of `program ARGS` unless one is running (or has finished):
/// `irs verify --publish --status-file …`, detached, its output in [`log_path`], bug schedules
/// in [`bugs_dir`]. Returns the process id of the verifier it started, if it started one.
pub fn ensure_verifier(id: ProgramId, program: &str, args: &[String]) -> Result<Option<u32>, ServiceError> {
    match status(id) {
        Status::Running(_) | Status::Finished(_) => return Ok(None),
        Status::None | Status::Stale(_) => {}
    }
    let exe = crate::launch::resolve_program(program).map_err(ReplayError::from)?;
    let exe = std::path::absolute(&exe).unwrap_or(exe);
    let irs = std::env::current_exe().map_err(ServiceError::Spawn)?;
    let log = std::fs::File::create(log_path(id)).map_err(ServiceError::Spawn)?;
    let err = log.try_clone().map_err(ServiceError::Spawn)?;
    let bugs = bugs_dir(id);
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
    let child = cmd.spawn().map_err(ServiceError::Spawn)?;
    Ok(Some(child.id()))
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
    /// Cutoffs published when the run started (the one in force is the last of them).
    pub published: Option<usize>,
    pub state: Option<VerifierState>,
}

/// What `irs run` did before the runs: started a verifier, or attached to one.
pub enum Attach {
    /// Started a verifier, with this process id.
    Started(u32),
    Attached(Status),
}

/// A program running under IRS: its verifier started or attached to, its first prefix there
/// (unless `no_wait`); each [`Session::run`] runs it once under the latest prefix.
pub struct Session {
    pub id: ProgramId,
    exe: PathBuf,
    args: Vec<String>,
    opts: RunOptions,
    verified: bool,
}

impl Session {
    /// Make sure the program's verifier runs and (unless `no_wait`) wait for its first prefix.
    pub fn attach(program: &str, args: &[String], opts: &RunOptions, mut attached: impl FnMut(&Attach)) -> Result<Session, ServiceError> {
        let id = program_id(program, args)?;
        match ensure_verifier(id, program, args)? {
            Some(pid) => attached(&Attach::Started(pid)),
            None => attached(&Attach::Attached(status(id))),
        }
        let verified = if opts.no_wait {
            published_constraints(id).is_some()
        } else {
            wait_for_prefix(id, program, opts.wait_limit)?;
            true
        };
        let exe = crate::launch::resolve_program(program).map_err(ReplayError::from)?;
        Ok(Session { id, exe, args: args.to_vec(), opts: opts.clone(), verified })
    }

    /// The command for one run under the latest prefix (or unverified, before the first one),
    /// and that prefix.
    fn command(&self) -> (std::process::Command, Option<InForce>) {
        let prefix = if self.verified || published_constraints(self.id).is_some() { in_force(self.id) } else { None };
        let mut cmd = std::process::Command::new(&self.exe);
        cmd.args(&self.args);
        if prefix.is_some() {
            cmd.env("IRS_MODE", "enforce").env("IRS_PREFIX", "installed").env("IRS_DIVERGENCE", &self.opts.divergence);
        }
        if self.opts.chaos {
            cmd.env("IRS_CHAOS", "1");
        }
        (cmd, prefix)
    }

    fn report(&self, index: u64, status: std::process::ExitStatus, started: Instant, prefix: Option<InForce>) -> RunReport {
        RunReport {
            index,
            status,
            micros: started.elapsed().as_micros() as u64,
            constraints: prefix.as_ref().map(|p| p.constraints),
            published: prefix.map(|p| p.published),
            state: read_state(self.id),
        }
    }

    fn spawn_err(&self, source: std::io::Error) -> ServiceError {
        ReplayError::from(crate::launch::LaunchError::Spawn { program: self.exe.display().to_string(), source }).into()
    }

    /// Run the program once with its own stdin, stdout and stderr (Ctrl-C reaches it).
    pub fn run(&self, index: u64) -> Result<RunReport, ServiceError> {
        let (mut cmd, prefix) = self.command();
        let started = Instant::now();
        let status = crate::launch::wait_for(cmd.spawn().map_err(|e| self.spawn_err(e))?).map_err(|e| self.spawn_err(e))?;
        Ok(self.report(index, status, started, prefix))
    }

    /// Run the program once with no input, capturing what it prints.
    pub fn run_captured(&self, index: u64) -> Result<(RunReport, std::process::Output), ServiceError> {
        let (mut cmd, prefix) = self.command();
        cmd.stdin(std::process::Stdio::null());
        let started = Instant::now();
        let out = cmd.output().map_err(|e| self.spawn_err(e))?;
        Ok((self.report(index, out.status, started, prefix), out))
    }
}

/// `irs run -- prog ARGS` without a prefix: make sure the program's verifier runs, wait for
/// its first prefix, then run the program `repeat` times under the segment, `every` apart.
pub fn run_under_irs(
    program: &str,
    args: &[String],
    opts: &RunOptions,
    attached: impl FnMut(&Attach),
    mut each: impl FnMut(&RunReport),
) -> Result<Vec<RunReport>, ServiceError> {
    let session = Session::attach(program, args, opts, attached)?;
    let mut out = Vec::new();
    for index in 0..opts.repeat {
        if index > 0 && !opts.every.is_zero() {
            std::thread::sleep(opts.every);
        }
        let report = session.run(index)?;
        each(&report);
        out.push(report);
    }
    Ok(out)
}
