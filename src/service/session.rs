//! `irs run` under IRS (DESIGN §1, §4 "Inputs" and "Publishing"): find what verification covers
//! this run's input, queue the input for verification when none does, wait for its first prefix (or
//! react at once, `--no-wait`), and run the program under the latest prefix of *its* input.
//!
//! What each run is:
//! - **verified**: the input's verification has published a prefix; the run contains it (and
//!   the runtime reacts if the run leaves it);
//! - **serialised**: no verification covers the input yet (or the input cannot be captured) and
//!   the reaction is `serial`: one thread at a time by the verifier's default policy, from the
//!   start: deterministic and replayable, the first execution the verifier explores for that
//!   input, but not verified;
//! - **unverified**: the same with reaction `free` (asked for): the run is unconstrained;
//! - with reaction `stop`, such a run does not start.

use super::input::{self, EnvSelection, Input, StdinCapture};
use super::state::{self, Status, VerifierState};
use super::store::{InputStore, ProgramStore};
use super::{files, in_force, queue, worker, InForce, ServiceError};
use crate::replay::ReplayError;
use shared_proto::ProgramId;
use std::ffi::OsString;
use std::io::Write;
use std::path::PathBuf;
use std::time::{Duration, Instant};

/// What a run does where no verification covers it: its input is not verified (yet), or it
/// leaves the verified trace. The runtime's `IRS_DIVERGENCE`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Reaction {
    /// Run (the rest) one thread at a time: deterministic, replayable, not verified.
    Serial,
    /// Do not run (the rest): a run that has started is aborted.
    Stop,
    /// Run (the rest) unconstrained, reported as unverified. Only when asked for.
    Free,
}

impl Reaction {
    pub fn parse(text: &str) -> Result<Reaction, String> {
        match text {
            "serial" => Ok(Reaction::Serial),
            "stop" => Ok(Reaction::Stop),
            "free" => Ok(Reaction::Free),
            other => Err(format!("unknown reaction `{other}` (expected serial, stop or free)")),
        }
    }
    pub fn name(self) -> &'static str {
        match self {
            Reaction::Serial => "serial",
            Reaction::Stop => "stop",
            Reaction::Free => "free",
        }
    }
}

/// How `irs run` runs a program under IRS.
#[derive(Clone, Debug)]
pub struct RunOptions {
    pub repeat: u64,
    pub every: Duration,
    /// Do not wait for the first prefix of an input no verification covers yet: react at once.
    pub no_wait: bool,
    pub wait_limit: Duration,
    pub chaos: bool,
    pub reaction: Reaction,
    pub env: EnvSelection,
    pub capture_limit: u64,
    /// What the worker this run starts anchors its inputs' prefixes on (`irs verify --publish
    /// --anchor`).
    pub anchor: crate::service::anchor::Anchor,
}

/// What covers a run.
#[derive(Clone, Debug, PartialEq)]
pub enum Coverage {
    /// The input's verification: this prefix was in force when the run started.
    Verified(InForce),
    /// Not verified: run one thread at a time from the start, because of `why`.
    Serialised(String),
    /// Not verified and unconstrained (reaction `free`), because of `why`.
    Unverified(String),
}

/// One run of the program and how verification stood then.
#[derive(Clone, Debug)]
pub struct RunReport {
    pub index: u64,
    pub status: std::process::ExitStatus,
    pub micros: u64,
    pub coverage: Coverage,
    /// What the runtime reported of the run: it left the verified trace (and how it reacted).
    pub left: Option<String>,
    pub state: Option<VerifierState>,
}

impl RunReport {
    /// Constraints in force when the run started; `None`: not a verified run.
    pub fn constraints(&self) -> Option<usize> {
        match &self.coverage {
            Coverage::Verified(p) => Some(p.constraints),
            _ => None,
        }
    }
}

/// What `irs run` found before the runs.
pub enum Attach {
    /// The input's verification has a prefix; its verifier is in this state.
    Verified { key: input::InputKey, status: Status },
    /// The input was queued for verification: a worker started (its process id), or one runs.
    Queued { key: input::InputKey, worker_started: Option<u32> },
    /// The input cannot be verified: why.
    Uncoverable(String),
}

/// The standard input every run of the session gets.
pub(super) enum Stdin {
    /// The captured bytes, served through a descriptor of the original's kind.
    Captured(Vec<u8>, input::StdinOrigin),
    /// The terminal, inherited.
    Terminal,
    /// What was read ahead, then the rest of this process's standard input.
    Relay(Vec<u8>),
}

/// A program running under IRS: its input's verification found (or queued), its first prefix
/// there (unless `no_wait`); each [`Session::run`] runs it once.
pub struct Session {
    pub id: ProgramId,
    /// The input's verification, when the input could be captured and kept.
    pub input: Option<InputStore>,
    pub(super) exe: PathBuf,
    args: Vec<String>,
    pub(super) opts: RunOptions,
    pub(super) stdin: Stdin,
    /// Why no verification covers the runs, when none can.
    uncoverable: Option<String>,
    /// The prefix in force when the session attached (its first run's, see `in_place`).
    pub(super) forced: Option<InForce>,
    /// What the input's verifier said of itself when the session attached.
    pub(super) verifier: Option<VerifierState>,
}

pub(super) fn spawn_err(exe: &std::path::Path, source: std::io::Error) -> ServiceError {
    ReplayError::from(crate::launch::LaunchError::Spawn { program: exe.display().to_string(), source }).into()
}

impl Session {
    /// Capture the input, find its verification or queue it, and (unless `no_wait`) wait for
    /// its first prefix.
    pub fn attach(program: &str, args: &[String], opts: &RunOptions, mut attached: impl FnMut(&Attach)) -> Result<Session, ServiceError> {
        let exe = crate::launch::resolve_program(program).map_err(ReplayError::from)?;
        let exe = std::path::absolute(&exe).unwrap_or(exe);
        let id = super::program_id_of(&exe, program, args)?;
        let origin = input::stdin_origin();
        let (stdin, captured) = match input::capture_stdin(opts.capture_limit)? {
            StdinCapture::Captured(bytes) => (Stdin::Captured(bytes.clone(), origin), Ok(bytes)),
            StdinCapture::Uncapturable { why, head } if head.is_empty() => (Stdin::Terminal, Err(why)),
            StdinCapture::Uncapturable { why, head } => (Stdin::Relay(head), Err(why)),
        };
        let mut session = Session { id, input: None, exe: exe.clone(), args: args.to_vec(), opts: opts.clone(), stdin, uncoverable: None, forced: None, verifier: None };
        let bytes = match captured {
            Ok(b) => b,
            Err(why) => {
                attached(&Attach::Uncoverable(why.clone()));
                session.uncoverable = Some(why);
                return session.refuse_if_stop();
            }
        };
        let base = Input::new(args, Input::current_env(), opts.env.clone(), &bytes);
        let pstore = ProgramStore::of(id);
        let (input, pins, whole, stored) = match files::find(&pstore, base, opts.capture_limit) {
            Ok(files::Found::Stored(input)) => (input, Vec::new(), false, true),
            Ok(files::Found::New { input, pins, whole }) => (input, pins, whole, false),
            Err(why) => {
                attached(&Attach::Uncoverable(why.clone()));
                session.uncoverable = Some(why);
                return session.refuse_if_stop();
            }
        };
        let store = pstore.input(input.key());
        let kept = match stored {
            // Read from its directory a moment ago: only its standard input's bytes are left to
            // compare (the key and `same_base` compare their hash).
            true => store.holds_stdin(&bytes),
            false => pstore.create().and_then(|_| store.save(&input, &bytes)).and_then(|_| {
                files::pin(&store, &input, &pins, whole).map_err(|e| super::store::StoreError::Write { path: store.files_dir().display().to_string(), reason: e.to_string() })
            }),
        };
        if let Err(e) = kept {
            let why = format!("the input cannot be kept for verification ({e})");
            attached(&Attach::Uncoverable(why.clone()));
            session.uncoverable = Some(why);
            return session.refuse_if_stop();
        }
        let status = state::status(&store);
        // Read once here (a segment is a table of the verified trace): the runs read it again.
        let forced = in_force(&store);
        if let (Status::Finished(st), None) = (&status, &forced) {
            // Its verification ended without a prefix (an unsupported construct, no correct
            // execution to anchor one on): nothing will cover this input's runs.
            let why = format!(
                "the verification of input {} ended without a prefix: {}",
                store.key,
                st.error.clone().unwrap_or_else(|| format!("verdict {}", st.verdict.as_deref().unwrap_or(&st.state)))
            );
            attached(&Attach::Uncoverable(why.clone()));
            session.uncoverable = Some(why);
            session.input = Some(store);
            return session.refuse_if_stop();
        }
        let mut worker_started = None;
        if matches!(status, Status::None | Status::Stale(_)) {
            // Not verified, or its verifier died: (again) in the queue. A stale verification's
            // last prefix stays in force meanwhile (it is safe).
            queue::enqueue(&pstore, store.key)?;
            worker_started = Some(worker::ensure(&pstore, &exe, opts.anchor)?);
        }
        session.verifier = status.state().cloned();
        if forced.is_some() {
            attached(&Attach::Verified { key: store.key, status });
        } else {
            attached(&Attach::Queued { key: store.key, worker_started: worker_started.flatten() });
            if !opts.no_wait {
                match wait_for_prefix(&pstore, &store, program_name(program, args), opts.wait_limit) {
                    Ok(()) => session.verifier = state::read_state(&store.state_file()),
                    // Nothing will cover this input: its runs go on as the reaction says.
                    Err(ServiceError::VerifierFailed { why, .. }) => {
                        let why = format!("the verification of input {} ended without a prefix: {why}", store.key);
                        attached(&Attach::Uncoverable(why.clone()));
                        session.uncoverable = Some(why);
                        session.input = Some(store);
                        return session.refuse_if_stop();
                    }
                    // No prefix yet: the plain program would run now, so this run does too, as
                    // the reaction says (serialised by default: not verified), and verification
                    // goes on for the next ones.
                    Err(ServiceError::NoPrefix { secs, .. }) => {
                        let why = format!("no prefix of input {} within {secs} s (its verification goes on; a later run may be covered)", store.key);
                        attached(&Attach::Uncoverable(why.clone()));
                        session.uncoverable = Some(why);
                        session.input = Some(store);
                        return session.refuse_if_stop();
                    }
                    Err(e) => return Err(e),
                }
            }
        }
        session.input = Some(store);
        session.forced = forced.or_else(|| session.prefix());
        if session.forced.is_none() {
            return session.refuse_if_stop();
        }
        Ok(session)
    }

    /// With reaction `stop`, a session whose runs nothing covers does not run.
    fn refuse_if_stop(self) -> Result<Session, ServiceError> {
        if self.opts.reaction == Reaction::Stop {
            return Err(ServiceError::NotCovered(self.why_not_covered()));
        }
        Ok(self)
    }

    fn why_not_covered(&self) -> String {
        match (&self.uncoverable, &self.input) {
            (Some(why), _) => why.clone(),
            (None, Some(s)) => format!("input {} is not verified yet (queued; `irs status` shows its progress)", s.key),
            (None, None) => "no verification covers this input".into(),
        }
    }

    /// The prefix in force for the session's input.
    fn prefix(&self) -> Option<InForce> {
        self.input.as_ref().and_then(in_force)
    }

    /// The command for one run, and what covers it.
    /// The program with its arguments, without this process's `IRS_*` variables.
    pub(super) fn base_command(&self) -> std::process::Command {
        let mut cmd = self.program_command();
        apply(&mut cmd, self.base_env());
        cmd
    }

    /// The program with its arguments, in this process's environment.
    pub(super) fn program_command(&self) -> std::process::Command {
        let mut cmd = std::process::Command::new(&self.exe);
        cmd.args(&self.args);
        cmd
    }

    /// What a run's environment changes from this process's: irs's own variables removed,
    /// chaos asked for.
    pub(super) fn base_env(&self) -> Vec<(OsString, Option<OsString>)> {
        let mut env: Vec<(OsString, Option<OsString>)> =
            std::env::vars_os().filter(|(k, _)| k.to_str().is_some_and(input::is_irs_variable)).map(|(k, _)| (k, None)).collect();
        if self.opts.chaos {
            env.push(("IRS_CHAOS".into(), Some("1".into())));
        }
        env
    }

    /// A verified run: under the prefix of `store`, every file it opens for reading compared
    /// with the verified one.
    pub(super) fn enforce_env(&self, store: &InputStore) -> [(OsString, Option<OsString>); 5] {
        [
            ("IRS_MODE".into(), Some("enforce".into())),
            ("IRS_PREFIX".into(), Some(store.segment().into())),
            ("IRS_DIVERGENCE".into(), Some(self.opts.reaction.name().into())),
            (shared_proto::input_files::ENV_DIR.into(), Some(store.files_dir().into())),
            (shared_proto::input_files::ENV_LIMIT.into(), Some(self.opts.capture_limit.to_string().into())),
        ]
    }

    fn command(&self, report: &std::path::Path) -> Result<(std::process::Command, Coverage), ServiceError> {
        let mut cmd = self.base_command();
        // A file the input's verification read that holds other bytes now: this run is on
        // another input (the next `irs run` finds or queues its verification).
        let changed = self.input.as_ref().and_then(|s| files::changed(s, self.opts.capture_limit));
        let coverage = match (self.prefix(), &self.input, changed) {
            (Some(p), Some(store), None) => {
                apply(&mut cmd, self.enforce_env(store));
                Coverage::Verified(p)
            }
            (_, _, changed) => {
                let why = match changed {
                    Some(c) => format!("{c} (it changed since this `irs run` began; the next one finds or queues its verification)"),
                    None => self.why_not_covered(),
                };
                if self.opts.reaction == Reaction::Stop {
                    return Err(ServiceError::NotCovered(why));
                }
                if self.opts.reaction == Reaction::Free {
                    Coverage::Unverified(why)
                } else {
                    cmd.env("IRS_MODE", "enforce").env("IRS_SERIAL", "1").env("IRS_DIVERGENCE", "serial");
                    Coverage::Serialised(why)
                }
            }
        };
        cmd.env("IRS_REPORT", report);
        Ok((cmd, coverage))
    }

    /// Run the program once, with the session's standard input and this process's stdout and
    /// stderr (Ctrl-C reaches it).
    pub fn run(&self, index: u64) -> Result<RunReport, ServiceError> {
        self.run_with(index, None)
    }

    /// Run the program once, capturing what it prints.
    pub fn run_captured(&self, index: u64) -> Result<(RunReport, std::process::Output), ServiceError> {
        let mut out = None;
        let r = self.run_with(index, Some(&mut out))?;
        Ok((r, out.expect("captured")))
    }

    fn run_with(&self, index: u64, capture: Option<&mut Option<std::process::Output>>) -> Result<RunReport, ServiceError> {
        let report_file = std::env::temp_dir().join(format!("irs-run-{}-{index}.report", std::process::id()));
        let _ = std::fs::remove_file(&report_file);
        let (mut cmd, coverage) = self.command(&report_file)?;
        let mut relay = None;
        // Bytes to write to the program's standard input once it runs, and where.
        let mut feed: Option<(Vec<u8>, Box<dyn Write + Send>)> = None;
        match &self.stdin {
            Stdin::Captured(_, input::StdinOrigin::Null) => {
                cmd.stdin(std::process::Stdio::null());
            }
            Stdin::Captured(_, input::StdinOrigin::Pipe) => {
                cmd.stdin(std::process::Stdio::piped());
            }
            Stdin::Captured(bytes, input::StdinOrigin::Socket) => {
                let (ours, theirs) = std::os::unix::net::UnixStream::pair().map_err(|e| spawn_err(&self.exe, e))?;
                cmd.stdin(std::os::fd::OwnedFd::from(theirs));
                feed = Some((bytes.clone(), Box::new(ours)));
            }
            Stdin::Captured(bytes, origin) => serve_copy(&mut cmd, bytes, origin)?,
            Stdin::Terminal => {}
            Stdin::Relay(_) => {
                cmd.stdin(std::process::Stdio::piped());
            }
        }
        let captured = capture.is_some();
        if captured {
            cmd.stdout(std::process::Stdio::piped()).stderr(std::process::Stdio::piped());
        }
        let started = Instant::now();
        let mut child = cmd.spawn().map_err(|e| spawn_err(&self.exe, e))?;
        if let Stdin::Captured(bytes, input::StdinOrigin::Pipe) = &self.stdin {
            if let Some(to) = child.stdin.take() {
                feed = Some((bytes.clone(), Box::new(to)));
            }
        }
        // The captured bytes, then the end of the stream when our end is dropped (the program
        // may stop reading first: the write fails then, and the thread ends).
        let _feeder = feed.map(|(bytes, mut to)| {
            std::thread::spawn(move || {
                let _ = to.write_all(&bytes);
            })
        });
        if let (Stdin::Relay(head), Some(mut to)) = (&self.stdin, child.stdin.take()) {
            let head = head.clone();
            // What was read ahead, then the rest as it comes: nothing the user sent is lost.
            relay = Some(std::thread::spawn(move || {
                if to.write_all(&head).is_ok() {
                    let _ = std::io::copy(&mut std::io::stdin().lock(), &mut to);
                }
            }));
        }
        let (status, output) = if captured {
            let out = child.wait_with_output().map_err(|e| spawn_err(&self.exe, e))?;
            (out.status, Some(out))
        } else {
            (crate::launch::wait_for(child).map_err(|e| spawn_err(&self.exe, e))?, None)
        };
        let micros = started.elapsed().as_micros() as u64;
        drop(relay);
        let left = std::fs::read_to_string(&report_file).ok().map(|s| s.trim().to_string()).filter(|s| !s.is_empty());
        let _ = std::fs::remove_file(&report_file);
        if let (Some(slot), Some(out)) = (capture, output) {
            *slot = Some(out);
        }
        let state = self.input.as_ref().and_then(|s| state::read_state(&s.state_file()));
        Ok(RunReport { index, status, micros, coverage, left, state })
    }
}

/// Serve the program `bytes` from a sealed in-memory copy; the copy of a regular file is
/// described as that file (`shared_proto::stdin_stat`).
pub(super) fn serve_copy(cmd: &mut std::process::Command, bytes: &[u8], origin: &input::StdinOrigin) -> Result<(), ServiceError> {
    cmd.stdin(input::sealed_memfd(bytes)?);
    if let input::StdinOrigin::File(st) = origin {
        cmd.env(shared_proto::stdin_stat::ENV_STDIN_STAT, shared_proto::stdin_stat::encode(st));
    }
    Ok(())
}

fn program_name(program: &str, args: &[String]) -> String {
    std::iter::once(program.to_string()).chain(args.iter().cloned()).collect::<Vec<_>>().join(" ")
}

/// Wait until the input's segment holds a prefix (or its verifier gave up).
pub fn wait_for_prefix(program: &ProgramStore, input: &InputStore, name: String, limit: Duration) -> Result<(), ServiceError> {
    let started = Instant::now();
    loop {
        if in_force(input).is_some() {
            return Ok(());
        }
        match state::status(input) {
            Status::Finished(s) => {
                if in_force(input).is_some() {
                    return Ok(());
                }
                let why = s.error.clone().unwrap_or_else(|| format!("it ended ({}) without a prefix", s.verdict.as_deref().unwrap_or(&s.state)));
                return Err(ServiceError::VerifierFailed { program: name, why });
            }
            // Still exploring, but it has said it will publish no prefix (no correct execution
            // to anchor one on).
            Status::Running(s) if s.error.is_some() => {
                return Err(ServiceError::VerifierFailed { program: name, why: s.error.clone().unwrap_or_default() });
            }
            Status::Stale(_) | Status::None if !queue::queued(program).contains(&input.key) && !worker::running(program) => {
                return Err(ServiceError::VerifierFailed { program: name, why: format!("its verifier is gone (the worker's log: {})", program.worker_log().display()) });
            }
            _ => {}
        }
        // Never past the limit: a short one is not rounded up to the polling interval (a
        // verifier that publishes within it would otherwise be waited for).
        let Some(left) = limit.checked_sub(started.elapsed()).filter(|l| !l.is_zero()) else {
            return Err(ServiceError::NoPrefix { program: name, secs: limit.as_secs_f64(), log: input.log_file().display().to_string() });
        };
        std::thread::sleep(left.min(Duration::from_millis(20)));
    }
}

/// `irs run -- prog ARGS` without a prefix: attach, then run the program `repeat` times,
/// `every` apart.
pub fn run_under_irs(program: &str, args: &[String], opts: &RunOptions, attached: impl FnMut(&Attach), each: impl FnMut(&RunReport)) -> Result<Vec<RunReport>, ServiceError> {
    let session = Session::attach(program, args, opts, attached)?;
    run_session(&session, opts, each)
}

/// Run an attached session's program `repeat` times, `every` apart.
pub fn run_session(session: &Session, opts: &RunOptions, mut each: impl FnMut(&RunReport)) -> Result<Vec<RunReport>, ServiceError> {
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

/// Make `changes` (a variable set, or removed) to the environment `cmd` runs with.
fn apply(cmd: &mut std::process::Command, changes: impl IntoIterator<Item = (OsString, Option<OsString>)>) {
    for (k, v) in changes {
        match v {
            Some(v) => cmd.env(k, v),
            None => cmd.env_remove(k),
        };
    }
}
