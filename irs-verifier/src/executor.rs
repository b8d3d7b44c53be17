//! The executor (DESIGN §7): starts an instrumented program as a fork server (EXPLORE mode) and
//! runs controlled executions on it: `run(schedule) -> Execution`. One server serves any number
//! of runs and survives any child's crash; dropping the executor ends the server, and the server
//! and its children die with the executor however it ends (parent-death signal), so no process
//! is left behind. The shared buffer is a memfd: no file in /dev/shm to leak.

use shared_proto::explore_buffer::{self, Capacity};
use shared_proto::explore_protocol::{self as proto, Hello, ProcessEnd, Request, RequestKind, Response};
pub use shared_proto::explore_protocol::Policy;
use shared_proto::{Outcome, ThreadId, Trace};
use crate::scratch_dir::{Kind, ScratchDir};
use std::fs::File;
use std::io::Write;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

/// Descriptor numbers the server finds its channel and buffers at.
const FD_CONTROL_IN: i32 = 200;
const FD_CONTROL_OUT: i32 = 201;
const FD_BUFFER: i32 = 202;
const FD_STDIN: i32 = 203;

#[derive(Debug, thiserror::Error)]
pub enum ExecError {
    #[error("cannot start {program}: {source}")]
    Spawn { program: String, source: std::io::Error },
    #[error("{0}")]
    System(String),
    #[error("{program} did not start as an irs fork server: {detail}")]
    NoServer { program: String, detail: String },
    #[error("the fork server of {program} stopped answering ({detail})")]
    ServerLost { program: String, detail: String },
    #[error("{0}")]
    Buffer(#[from] explore_buffer::BufferError),
    /// A construct EXPLORE does not model, or one of its limits, as the runtime named it.
    #[error("unsupported: {0}")]
    Unsupported(String),
    #[error("executor: {0}")]
    Usage(String),
}

#[derive(Clone, Debug)]
pub struct Options {
    /// Per-execution time limit.
    pub timeout: Duration,
    /// What every execution reads on stdin.
    pub stdin: Vec<u8>,
    /// Stack size of each logical thread (fiber), in KiB.
    pub stack_kb: usize,
    /// Fork a process per execution instead of running them in the persistent worker (slower;
    /// for comparison and for programs the worker cannot restore).
    pub fork_each: bool,
    /// The values every call of `__VERIFIER_nondet_*` explores (`None`: the runtime's default,
    /// [`shared_proto::explore_protocol::DEFAULT_NONDET_VALUES`]).
    pub nondet_values: Option<Vec<i64>>,
    /// `--max-threads N`: how many threads each thread may create before its next creation
    /// ends the execution (`Outcome::ThreadBound`); `None`: no bound (EXPLORE's capacity).
    pub max_threads: Option<u32>,
    /// SV-COMP's conventions (see `shared_proto::explore_protocol::ENV_SVCOMP`).
    pub svcomp: bool,
    /// Let watched loops iterate this many times without change before discarding the
    /// execution, instead of halting the spinning thread (`irs verify --spin-bound`).
    pub spin_bound: Option<u32>,
    /// Explore spurious wake-ups of condition-variable waits (`irs verify --spurious-wake-ups`).
    pub spurious_wake_ups: bool,
    /// The whole environment every execution sees (the input's, DESIGN §4 "Inputs"); `None`: this
    /// process's. The executor's own `IRS_*` variables are added either way.
    pub env: Option<Vec<(String, String)>>,
    /// Where the files the program opens for reading are captured and read from
    /// (`shared_proto::input_files`); `None`: the disk, as it is at each open.
    pub input_files: Option<PathBuf>,
    /// The working directory of every execution (the input's); `None`: this process's.
    pub cwd: Option<PathBuf>,
    /// Isolate every execution (DESIGN §7, `docs/src/sandbox.md`): namespaces of its own and a
    /// private view of the file system. Off only on request (`IRS_SANDBOX=off` in the
    /// verifier's environment turns it off too): the program's writes then really happen.
    pub sandbox: bool,
}

impl Default for Options {
    fn default() -> Self {
        Options { timeout: Duration::from_secs(10), stdin: Vec::new(), stack_kb: 256, fork_each: false, nondet_values: None, max_threads: None, svcomp: false, spin_bound: None, spurious_wake_ups: false, env: None, input_files: None, cwd: None, sandbox: true }
    }
}

impl Options {
    /// A command that runs `program` on the input: its environment, in its working directory
    /// (a relative program name is the caller's, not the input's working directory's).
    pub(crate) fn command(&self, program: &Path) -> Command {
        let program_path = match &self.cwd {
            Some(_) => std::path::absolute(program).unwrap_or_else(|_| program.to_path_buf()),
            None => program.to_path_buf(),
        };
        let mut cmd = Command::new(&program_path);
        if let Some(env) = &self.env {
            cmd.env_clear().envs(env.iter().map(|(k, v)| (k, v)));
        }
        if let Some(dir) = &self.cwd {
            cmd.current_dir(dir);
        }
        cmd
    }

    /// The values `__VERIFIER_nondet_*` calls explore, as given or by default.
    pub fn nondet_values(&self) -> Vec<i64> {
        self.nondet_values.clone().unwrap_or_else(|| proto::DEFAULT_NONDET_VALUES.to_vec())
    }
}

/// One controlled execution.
#[derive(Clone, Debug)]
pub struct Execution {
    pub trace: Trace,
    /// What the program printed (stdout and stderr together, at most 64 KiB).
    pub output: Vec<u8>,
    /// At a deadlock: the operations the blocked threads wait to perform.
    pub blocked: Vec<shared_proto::PendingOp>,
    /// Violations and crashes of other threads after the first, which is the outcome (a thread
    /// that fails halts; the others go on).
    pub more_bugs: Vec<Outcome>,
    /// Per step of the trace, the program's running time since `main` when it was decided, µs
    /// (for a run from a snapshot, the prefix counts as it ran when the snapshot was made): what
    /// re-running the schedule up to there costs.
    pub step_micros: Vec<u32>,
    /// Fork to end, as the server measured it (for the persistent worker: request to end, plus
    /// the memory restore that prepared the run).
    pub micros: u64,
    /// Of which the set-up: the fork call in the server, or the persistent worker's memory
    /// restore.
    pub setup_micros: u64,
    /// The whole round trip seen from here: request, execution, response, decoding.
    pub total_micros: u64,
    /// When the execution ended, `CLOCK_MONOTONIC` µs as the server saw it (0: not known).
    pub ended_at: u64,
}

impl Execution {
    pub fn outcome(&self) -> &Outcome {
        &self.trace.outcome
    }

    /// The schedule that reproduces this execution: the chosen thread of every step.
    /// The schedule that runs this execution again: each step's thread, and the value each
    /// call of `__VERIFIER_nondet_*` took (see `ThreadId::CHOICE_SHIFT`).
    pub fn schedule(&self) -> Vec<ThreadId> {
        self.trace.steps.iter().map(|s| s.entry()).collect()
    }

    /// The schedule without the steps of read-only iterations (`Policy::Anchor`): an execution
    /// in which no thread iterated a watched loop without changing anything.
    pub fn schedule_without_read_only(&self) -> Vec<ThreadId> {
        self.trace.steps.iter().filter(|s| !s.read_only).map(|s| s.entry()).collect()
    }
}

/// A paused execution on the server (see [`Executor::snapshot`]): runs from it continue the
/// execution after its prefix instead of starting from `main`.
#[derive(Debug)]
pub struct Snapshot {
    level: usize,
    prefix: Vec<ThreadId>,
}

impl Snapshot {
    pub fn prefix(&self) -> &[ThreadId] {
        &self.prefix
    }
}

/// What asking for a snapshot gave.
pub enum SnapshotResult {
    Ready(Snapshot),
    /// The execution ended before it reached the requested step.
    Ended(Execution),
    /// The execution reached the step but had changed its private view of the file system
    /// there, which continuations cannot share: run from `main` instead.
    Declined,
}

pub struct Executor {
    program: String,
    /// How many snapshots are active (nested); requests go to the innermost.
    snapshots: usize,
    server: Child,
    /// `None` once dropped: closing it ends the server's loop.
    to_server: Option<File>,
    from_server: File,
    /// Shared with the runs in flight, which read it as the program writes it.
    buffer: std::sync::Arc<memmap2::MmapMut>,
    hello: Hello,
    sites: std::sync::Arc<Vec<(shared_proto::SiteId, shared_proto::SiteInfo)>>,
    globals: std::sync::Arc<Vec<shared_proto::symbolizer::GlobalRange>>,
    options: Options,
    /// Where responses are read (reused: executions come thousands a second).
    response: Vec<u8>,
    spin: proto::SpinBudget,
    /// A run was asked for and its answer not yet read (see [`Executor::start_run`]).
    in_flight: bool,
    /// Emptied vectors of executions the caller is done with (see [`Executor::recycle`]).
    spare: explore_buffer::Execution,
    spare_enabled: Vec<Vec<shared_proto::PendingOp>>,
    /// The last on-demand reader's index of the enabled lists (reused: one entry a step).
    spare_at: Vec<(u32, u32)>,
    /// Where the program builds its executions' private view (dropped after the server ends).
    _sandbox: Option<ScratchDir>,
}

/// Enabled lists kept for reuse at most (a few runs' worth).
const SPARE_ENABLED: usize = 4096;

/// A run asked for and not yet finished (see [`Executor::start_run`]): what the program has
/// published of it so far.
pub struct RunInFlight {
    buffer: std::sync::Arc<memmap2::MmapMut>,
    reader: explore_buffer::Reader,
    raw: explore_buffer::Execution,
    started: std::time::Instant,
    wait: proto::SpinWait,
    response: Option<Response>,
}

impl RunInFlight {
    /// The steps so far: every one but the last has all its events (the last too once the run
    /// has ended).
    pub fn steps(&self) -> &[shared_proto::Step] {
        &self.raw.steps
    }
    /// How many events the run has published.
    pub fn event_count(&self) -> usize {
        self.reader.event_count(&self.raw)
    }
    /// Events `range` (published), decoded now (the execution leaves them out), appended to `out`.
    pub fn events(&self, range: std::ops::Range<usize>, out: &mut Vec<shared_proto::Event>) -> Result<(), ExecError> {
        Ok(self.reader.events(&self.buffer, &self.raw, range, out)?)
    }
    pub fn threads(&self) -> &[shared_proto::ThreadInfo] {
        &self.raw.threads
    }
    /// Whether the run has ended (its steps are all there).
    pub fn ended(&self) -> bool {
        self.response.is_some()
    }
    /// How many operations were enabled at step `s`.
    pub fn enabled_len(&self, s: usize) -> usize {
        self.reader.enabled_len(&self.raw, s)
    }
    /// The operations enabled at step `s`, decoded now (the execution leaves them out).
    pub fn enabled(&self, s: usize) -> Result<Vec<shared_proto::PendingOp>, ExecError> {
        Ok(self.reader.enabled(&self.buffer, &self.raw, s)?)
    }
    /// Once ended at a deadlock: what the blocked threads wait to perform.
    pub fn blocked(&self) -> &[shared_proto::PendingOp] {
        &self.raw.blocked
    }
}

/// How long the executor polls for a response at most before it sleeps in `read` (a small
/// program's execution takes tens of µs; see `explore_protocol::SpinBudget`).
const RESPONSE_SPIN_US: u32 = 2000;

fn memfd(name: &std::ffi::CStr, bytes: usize) -> Result<File, ExecError> {
    // SAFETY: creating a new anonymous file; ownership goes to the returned File.
    let fd = unsafe { libc::memfd_create(name.as_ptr(), libc::MFD_CLOEXEC) };
    if fd < 0 {
        return Err(ExecError::System(format!("memfd_create: {}", std::io::Error::last_os_error())));
    }
    // SAFETY: `fd` is a fresh descriptor we own.
    let f = unsafe { File::from_raw_fd(fd) };
    f.set_len(bytes as u64).map_err(|e| ExecError::System(format!("sizing a memfd: {e}")))?;
    Ok(f)
}

fn pipe() -> Result<(OwnedFd, OwnedFd), ExecError> {
    let mut fds = [0; 2];
    // SAFETY: pipe2 fills two new descriptors, which we own from here on.
    if unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) } != 0 {
        return Err(ExecError::System(format!("pipe: {}", std::io::Error::last_os_error())));
    }
    // SAFETY: as above.
    Ok(unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) })
}

/// How long a program that did not start as a fork server is given to finish its message on
/// stderr.
const STDERR_WAIT: Duration = Duration::from_millis(500);

/// Wait until the server's hello can be read: until its pipe has data or its end. The server
/// dying first (`Err(None)`), or taking longer than `limit` (a constructor that never returns),
/// is an error; the pipe's end alone would not tell, as a process the program forked before
/// `main` may hold it.
fn wait_for_hello(server: &mut Child, from: &File, limit: Duration) -> Result<(), Option<String>> {
    let started = std::time::Instant::now();
    loop {
        let mut p = libc::pollfd { fd: from.as_raw_fd(), events: libc::POLLIN, revents: 0 };
        // SAFETY: polling a descriptor we own, for at most 50 ms.
        if unsafe { libc::poll(&mut p, 1, 50) } > 0 {
            return Ok(());
        }
        if let Ok(Some(_)) = server.try_wait() {
            return Err(None);
        }
        if started.elapsed() > limit {
            return Err(Some(format!("it did not say hello within {:.0} s of starting (the per-execution time limit)", limit.as_secs_f64())));
        }
    }
}

/// What `r` yields until its end or until `wait` has passed, whichever is first (as text).
fn read_for_a_while(r: std::process::ChildStderr, wait: Duration) -> String {
    let fd = r.as_raw_fd();
    let deadline = std::time::Instant::now() + wait;
    let mut out = Vec::new();
    let mut buf = [0u8; 4096];
    while out.len() < 64 << 10 {
        let left = deadline.saturating_duration_since(std::time::Instant::now());
        let mut p = libc::pollfd { fd, events: libc::POLLIN, revents: 0 };
        // SAFETY: polling a descriptor we own, with a bounded timeout.
        if left.is_zero() || unsafe { libc::poll(&mut p, 1, left.as_millis().max(1) as i32) } <= 0 {
            break;
        }
        // SAFETY: reading into our own buffer from a descriptor poll found readable (or at its
        // end), so the read does not block.
        let n = unsafe { libc::read(fd, buf.as_mut_ptr() as *mut libc::c_void, buf.len()) };
        if n <= 0 {
            break;
        }
        out.extend_from_slice(&buf[..n as usize]);
    }
    String::from_utf8_lossy(&out).into_owned()
}

impl Executor {
    /// Start `program ARGS` as a fork server.
    /// The options it was started with.
    pub fn options(&self) -> &Options {
        &self.options
    }

    pub fn start(program: &Path, args: &[String], options: Options) -> Result<Executor, ExecError> {
        let name = program.display().to_string();
        let cap = Capacity::DEFAULT;
        let buffer_file = memfd(c"irs-explore-buffer", cap.bytes())?;
        let stdin_file = memfd(c"irs-explore-stdin", 0)?;
        (&stdin_file).write_all(&options.stdin).map_err(|e| ExecError::System(format!("writing stdin: {e}")))?;
        let (req_r, req_w) = pipe()?;
        let (resp_r, resp_w) = pipe()?;
        let moves = [
            (req_r.as_raw_fd(), FD_CONTROL_IN),
            (resp_w.as_raw_fd(), FD_CONTROL_OUT),
            (buffer_file.as_raw_fd(), FD_BUFFER),
            (stdin_file.as_raw_fd(), FD_STDIN),
        ];
        let mut cmd = options.command(program);
        cmd.args(args)
            .env("IRS_MODE", "explore")
            .env(proto::ENV_CONTROL_IN, FD_CONTROL_IN.to_string())
            .env(proto::ENV_CONTROL_OUT, FD_CONTROL_OUT.to_string())
            .env(proto::ENV_BUFFER_FD, FD_BUFFER.to_string())
            .env(proto::ENV_BUFFER_BYTES, cap.bytes().to_string())
            .env(proto::ENV_STDIN_FD, FD_STDIN.to_string())
            .env(proto::ENV_STACK_KB, options.stack_kb.to_string())
            .env(proto::ENV_NONDET_VALUES, options.nondet_values().iter().map(|v| v.to_string()).collect::<Vec<_>>().join(","))
            .env(proto::ENV_MAX_THREADS, options.max_threads.unwrap_or(0).to_string())
            .env_remove(proto::ENV_FORK_EACH)
            .env_remove(proto::ENV_SVCOMP)
            .env_remove(proto::ENV_SPIN_BOUND)
            .env_remove(proto::ENV_SPURIOUS_WAKE_UPS)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped());
        // SAFETY: between fork and exec only async-signal-safe calls (dup2, prctl) run.
        unsafe {
            cmd.pre_exec(move || {
                for (from, to) in moves {
                    if libc::dup2(from, to) < 0 {
                        return Err(std::io::Error::last_os_error());
                    }
                }
                libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL);
                Ok(())
            });
        }
        if options.svcomp {
            cmd.env(proto::ENV_SVCOMP, "1");
        }
        if let Some(k) = options.spin_bound {
            cmd.env(proto::ENV_SPIN_BOUND, k.to_string());
        }
        if options.spurious_wake_ups {
            cmd.env(proto::ENV_SPURIOUS_WAKE_UPS, "1");
        }
        if options.fork_each {
            cmd.env(proto::ENV_FORK_EACH, "1");
        }
        cmd.env_remove(shared_proto::input_files::ENV_DIR);
        if let Some(dir) = &options.input_files {
            cmd.env(shared_proto::input_files::ENV_DIR, dir);
        }
        cmd.env_remove(proto::ENV_SANDBOX_DIR);
        let sandbox = if options.sandbox && !crate::scratch_dir::disabled_by_environment() {
            let dir = ScratchDir::create(Kind::Sandbox).map_err(|e| ExecError::System(format!("making the sandbox directory in {}: {e}", std::env::temp_dir().display())))?;
            cmd.env(proto::ENV_SANDBOX_DIR, dir.path());
            Some(dir)
        } else {
            None
        };
        let mut server = cmd.spawn().map_err(|source| ExecError::Spawn { program: name.clone(), source })?;
        drop((req_r, resp_w, stdin_file));
        let mut from_server = File::from(resp_r);
        // `Err(None)`: it ended before saying hello; `Err(Some(why))`: anything else.
        let hello: Result<Hello, Option<String>> = match wait_for_hello(&mut server, &from_server, options.timeout) {
            Err(why) => Err(why),
            Ok(()) => proto::receive_hello(&mut from_server).map_err(|e| match e {
                proto::ProtocolError::Malformed(_) => Some(e.to_string()),
                _ => None,
            }),
        };
        let hello = match hello {
            Ok(h) => h,
            Err(why) => {
                // Closing the request pipe first ends any process of the program's still
                // waiting on it; what it wrote on stderr is read for a while, not until every
                // process holding the pipe is gone (a child it left behind may hold it for good).
                drop(req_w);
                let _ = server.kill();
                let status = server.wait().ok();
                let err = server.stderr.take().map(|s| read_for_a_while(s, STDERR_WAIT)).unwrap_or_default();
                let detail = match (why, err.lines().next(), status) {
                    (Some(why), _, _) => why,
                    (None, Some(line), _) => line.to_string(),
                    (None, None, Some(st)) => format!("it ended ({st}) before saying hello; does it run at all?"),
                    (None, None, None) => "it ended before saying hello".to_string(),
                };
                return Err(ExecError::NoServer { program: name, detail });
            }
        };
        let to_server = Some(File::from(req_w));
        // SAFETY: a view of our own memfd, which the server's children write. We read records
        // only below the counts a child published (acquire), or after it has ended (the
        // server's answer says so), and write nothing but the live word (atomically) while no
        // child runs.
        let buffer = unsafe { memmap2::MmapMut::map_mut(&buffer_file) }.map_err(|e| ExecError::System(format!("mapping the buffer: {e}")))?;
        let buffer = std::sync::Arc::new(buffer);
        let sites = std::sync::Arc::new(hello.sites.clone());
        let globals = std::sync::Arc::new(hello.globals.clone());
        Ok(Executor { program: name, snapshots: 0, server, to_server, from_server, buffer, hello, sites, globals, options, response: vec![0u8; proto::MAX_RESPONSE], spin: proto::SpinBudget::new(RESPONSE_SPIN_US), in_flight: false, spare: Default::default(), spare_enabled: Vec::new(), spare_at: Vec::new(), _sandbox: sandbox })
    }

    pub fn hello(&self) -> &Hello {
        &self.hello
    }

    /// Run one execution from `main` following `schedule`, then the default policy.
    pub fn run(&mut self, schedule: &[ThreadId]) -> Result<Execution, ExecError> {
        self.from_main()?;
        self.request(schedule, Policy::Default)
    }

    /// Run one execution from `main` following `schedule`, then random choices from `seed`.
    pub fn run_random(&mut self, schedule: &[ThreadId], seed: u64) -> Result<Execution, ExecError> {
        self.from_main()?;
        self.request(schedule, Policy::Random(seed))
    }

    /// A complete execution from `main` under `policy` whose threads never halt in a spin-wait:
    /// the run under `policy` itself if it ends normally, else the run under its iterating
    /// version (`Policy::iterating`) with its read-only iterations left out, if that one ends
    /// normally when run again as a schedule. `None`: neither does.
    pub fn run_complete(&mut self, policy: Policy) -> Result<Option<Execution>, ExecError> {
        let exits = |x: &Execution| matches!(x.outcome(), Outcome::Exit(_));
        let first = self.run_with_policy(&[], policy)?;
        if exits(&first) {
            return Ok(Some(first));
        }
        let Some(iterating) = policy.iterating() else { return Ok(None) };
        let spun = self.run_with_policy(&[], iterating)?;
        if !exits(&spun) {
            return Ok(None);
        }
        let again = self.run(&spun.schedule_without_read_only())?;
        Ok(exits(&again).then_some(again))
    }

    /// Run one execution from `main` following `schedule`, then `policy`.
    pub fn run_with_policy(&mut self, schedule: &[ThreadId], policy: Policy) -> Result<Execution, ExecError> {
        self.from_main()?;
        self.request(schedule, policy)
    }

    fn from_main(&self) -> Result<(), ExecError> {
        if self.snapshots > 0 {
            return Err(ExecError::Usage("runs from main need every snapshot released first".into()));
        }
        Ok(())
    }

    fn innermost(&self, snap: &Snapshot) -> Result<(), ExecError> {
        if snap.level != self.snapshots {
            return Err(ExecError::Usage("only the innermost snapshot can be used or released".into()));
        }
        Ok(())
    }

    /// Pause an execution after `prefix` (from `main`, or from `within`, which must be the
    /// innermost snapshot) and keep it on the server.
    pub fn snapshot(&mut self, within: Option<&Snapshot>, suffix: &[ThreadId]) -> Result<SnapshotResult, ExecError> {
        let mut prefix = match within {
            Some(w) => {
                self.innermost(w)?;
                w.prefix.clone()
            }
            None => {
                self.from_main()?;
                Vec::new()
            }
        };
        prefix.extend_from_slice(suffix);
        let (resp, started) = self.exchange(RequestKind::Snapshot, &prefix, Policy::Default)?;
        if resp.end == ProcessEnd::SnapshotReady {
            self.snapshots += 1;
            return Ok(SnapshotResult::Ready(Snapshot { level: self.snapshots, prefix }));
        }
        if resp.end == ProcessEnd::SnapshotDeclined {
            // The declining process has ended; the level that made it answers for it.
            self.response()?;
            return Ok(SnapshotResult::Declined);
        }
        let raw = explore_buffer::read(&self.buffer)?;
        Ok(SnapshotResult::Ended(self.execution(resp, raw, started, self.options.timeout.as_millis() as u64)?))
    }

    /// Continue the snapshot's execution following `suffix`, then the default policy. The
    /// result is the whole execution, as if it had run from `main` with prefix + suffix.
    pub fn run_from(&mut self, snap: &Snapshot, suffix: &[ThreadId]) -> Result<Execution, ExecError> {
        self.innermost(snap)?;
        let schedule: Vec<ThreadId> = snap.prefix.iter().chain(suffix).copied().collect();
        self.request(&schedule, Policy::Default)
    }

    /// Continue the snapshot's execution following `suffix`, then random choices from `seed`.
    pub fn run_random_from(&mut self, snap: &Snapshot, suffix: &[ThreadId], seed: u64) -> Result<Execution, ExecError> {
        self.innermost(snap)?;
        let schedule: Vec<ThreadId> = snap.prefix.iter().chain(suffix).copied().collect();
        self.request(&schedule, Policy::Random(seed))
    }

    /// End the innermost snapshot.
    pub fn release(&mut self, snap: Snapshot) -> Result<(), ExecError> {
        self.innermost(&snap)?;
        // The snapshot's process ends; the level below answers the request that made it.
        self.exchange(RequestKind::Release, &[], Policy::Default)?;
        self.snapshots -= 1;
        Ok(())
    }

    /// Send a request; for a run or a snapshot, the buffer is cleared for it first.
    fn send(&mut self, kind: RequestKind, schedule: &[ThreadId], policy: Policy) -> Result<(), ExecError> {
        if self.in_flight {
            return Err(ExecError::Usage("a run is still in flight".into()));
        }
        // The fork server refuses a longer one (and ends): say it here.
        if schedule.len() > proto::MAX_SCHEDULE {
            return Err(ExecError::Usage(format!("a schedule of {} steps (at most {} can be followed)", schedule.len(), proto::MAX_SCHEDULE)));
        }
        if kind != RequestKind::Release {
            // No run holds the buffer any more (each is finished or dropped before the next).
            let Some(buffer) = std::sync::Arc::get_mut(&mut self.buffer) else {
                return Err(ExecError::Usage("an earlier run still reads the buffer".into()));
            };
            explore_buffer::clear_live(buffer);
        }
        let req = Request {
            kind,
            schedule: schedule.iter().map(|t| t.0).collect(),
            timeout_ms: self.options.timeout.as_millis() as u64,
            policy,
        };
        let to_server = self.to_server.as_mut().expect("open until drop");
        to_server.write_all(&proto::encode_request(&req)).map_err(|e| self.lost(e.into()))
    }

    fn lost(&self, e: proto::ProtocolError) -> ExecError {
        ExecError::ServerLost { program: self.program.clone(), detail: e.to_string() }
    }

    /// Read the answer (sleeping until it comes).
    fn response(&mut self) -> Result<Response, ExecError> {
        let n = proto::read_frame_into(&mut self.from_server, &mut self.response).map_err(|e| self.lost(e))?;
        proto::decode_response(&self.response[..n]).ok_or_else(|| self.lost(proto::ProtocolError::Malformed("response".into())))
    }

    fn exchange(&mut self, kind: RequestKind, schedule: &[ThreadId], policy: Policy) -> Result<(Response, std::time::Instant), ExecError> {
        let started = std::time::Instant::now();
        self.send(kind, schedule, policy)?;
        self.spin.wait_readable(self.from_server.as_raw_fd());
        Ok((self.response()?, started))
    }

    /// Run `schedule`, then `policy`, and wait for the whole execution. Nothing reads the
    /// buffer before the answer: polling it while the program writes it would pull its cache
    /// lines back and forth between the cores for nothing (10-15% of the executor's
    /// throughput, side by side), as only a walk that follows the run has use for its steps.
    fn request(&mut self, schedule: &[ThreadId], policy: Policy) -> Result<Execution, ExecError> {
        let mut run = self.begin_run(schedule, policy, false)?;
        self.spin.wait_or(&mut run.wait, self.from_server.as_raw_fd(), || false);
        self.answered(&mut run)?;
        self.finish(run)
    }

    fn begin_run(&mut self, schedule: &[ThreadId], policy: Policy, on_demand: bool) -> Result<RunInFlight, ExecError> {
        let started = std::time::Instant::now();
        self.send(RequestKind::Run, schedule, policy)?;
        self.in_flight = true;
        let wait = self.spin.begin();
        let reader = if on_demand { explore_buffer::Reader::on_demand() } else { explore_buffer::Reader::default() };
        let at = if on_demand { std::mem::take(&mut self.spare_at) } else { Vec::new() };
        let reader = reader.reusing(std::mem::take(&mut self.spare_enabled), at);
        Ok(RunInFlight { buffer: self.buffer.clone(), reader, raw: std::mem::take(&mut self.spare), started, wait, response: None })
    }

    /// Ask for a run following `suffix` from the innermost snapshot `snap` (or from `main`),
    /// then the default policy, and return at once: [`progress`](Self::progress) follows it as
    /// it goes, [`finish`](Self::finish) ends it. The events and the steps' enabled lists are
    /// left out (empty in the execution) and decoded on demand ([`RunInFlight::events`],
    /// [`RunInFlight::enabled`]).
    pub fn start_run(&mut self, snap: Option<&Snapshot>, suffix: &[ThreadId]) -> Result<RunInFlight, ExecError> {
        match snap {
            Some(snap) => {
                self.innermost(snap)?;
                let schedule: Vec<ThreadId> = snap.prefix.iter().chain(suffix).copied().collect();
                self.begin_run(&schedule, Policy::Default, true)
            }
            None => {
                self.from_main()?;
                self.begin_run(suffix, Policy::Default, true)
            }
        }
    }

    /// Wait until the run has published another step, or has ended: `Ok(true)` once it has.
    /// (Polls while the spin budget lasts, then sleeps until the end.)
    pub fn progress(&mut self, run: &mut RunInFlight) -> Result<bool, ExecError> {
        if run.response.is_some() {
            return Ok(true);
        }
        let mut failed = None;
        let buffer: &[u8] = &run.buffer;
        let (reader, raw) = (&mut run.reader, &mut run.raw);
        let woke = self.spin.wait_or(&mut run.wait, self.from_server.as_raw_fd(), || match reader.advance(buffer, raw) {
            Ok(new) => new,
            Err(e) => {
                failed = Some(e);
                true
            }
        });
        if let Some(e) = failed {
            return Err(e.into());
        }
        if woke == proto::Woke::Progress {
            return Ok(false);
        }
        self.answered(run)?;
        Ok(true)
    }

    /// Read the run's answer (waiting for it if it has not come), then the rest of its buffer.
    fn answered(&mut self, run: &mut RunInFlight) -> Result<(), ExecError> {
        let resp = self.response()?;
        self.in_flight = false;
        run.reader.finish(&run.buffer, &mut run.raw)?;
        run.response = Some(resp);
        Ok(())
    }

    /// The whole execution (waiting for its end).
    pub fn finish(&mut self, mut run: RunInFlight) -> Result<Execution, ExecError> {
        while !self.progress(&mut run)? {}
        let resp = run.response.take().expect("ended");
        let RunInFlight { reader, raw, started, .. } = run;
        let (enabled, at) = reader.into_pool();
        self.spare_enabled = enabled;
        if let Some(at) = at {
            self.spare_at = at;
        }
        self.execution(resp, raw, started, self.options.timeout.as_millis() as u64)
    }

    /// Hand back an execution the caller is done with: its vectors serve the next runs
    /// (executions come thousands a second, each with a vector per step).
    pub fn recycle(&mut self, x: Execution) {
        let Trace { threads, mut events, mut steps, .. } = x.trace;
        for s in steps.drain(..) {
            if self.spare_enabled.len() >= SPARE_ENABLED {
                break;
            }
            let mut v = s.enabled;
            if v.capacity() > 0 {
                v.clear();
                self.spare_enabled.push(v);
            }
        }
        let (mut threads, mut step_micros) = (threads, x.step_micros);
        events.clear();
        threads.clear();
        step_micros.clear();
        self.spare = explore_buffer::Execution { threads, events, steps, step_micros, ..Default::default() };
    }

    fn execution(&self, resp: Response, raw: explore_buffer::Execution, started: std::time::Instant, timeout_ms: u64) -> Result<Execution, ExecError> {
        if let Some(err) = raw.tool_error {
            return Err(ExecError::Unsupported(err));
        }
        let outcome = match (resp.end, raw.outcome) {
            // A violation stands even when the threads that went on after it never stopped.
            (ProcessEnd::TimedOut, Some(o @ Outcome::Violation { .. })) => o,
            (ProcessEnd::TimedOut, _) => Outcome::Timeout { millis: timeout_ms },
            // A violation or deadlock the child reported stands; so does a signal it recorded.
            (_, Some(o)) => o,
            (ProcessEnd::Signaled(sig), None) => Outcome::Signal(sig),
            (ProcessEnd::SnapshotReady | ProcessEnd::SnapshotDeclined, _) => {
                return Err(ExecError::ServerLost { program: self.program.clone(), detail: "a run answered as a snapshot".into() })
            }
            // The program left without `exit` (`_exit`, or the exit system call): as it said.
            (ProcessEnd::Exited(code), None) => Outcome::Exit(code),
        };
        let h = &self.hello;
        let trace = Trace {
            program_id: h.program_id,
            argv: h.argv.clone(),
            sites: self.sites.clone(),
            globals: self.globals.clone(),
            image: h.image,
            threads: raw.threads,
            events: raw.events,
            steps: raw.steps,
            outcome,
        };
        Ok(Execution { trace, blocked: raw.blocked, more_bugs: raw.more_bugs, step_micros: raw.step_micros, output: resp.output, micros: resp.micros, setup_micros: resp.setup_micros, total_micros: started.elapsed().as_micros() as u64, ended_at: resp.ended_at })
    }

    pub fn program(&self) -> PathBuf {
        PathBuf::from(&self.program)
    }
}

impl Drop for Executor {
    fn drop(&mut self) {
        // Closing the request pipe ends the server's loop; make sure it is gone either way.
        // (The sandbox directory is removed after it, when the fields are dropped.)
        drop(self.to_server.take());
        for _ in 0..100 {
            if let Ok(Some(_)) = self.server.try_wait() {
                return;
            }
            std::thread::sleep(Duration::from_millis(2));
        }
        let _ = self.server.kill();
        let _ = self.server.wait();
    }
}
