//! EXPLORE's fork server (DESIGN §7). Started by the executor with two pipes and a
//! shared buffer, the program's runtime becomes a server before any user code runs, while only
//! the main thread exists. Executions run `main` under the controlled
//! [`scheduler`](crate::explore::scheduler) and write their trace into the shared buffer as they go; the
//! server answers each request with how the execution ended and what it printed.
//!
//! *Persistent worker.* A process per execution costs a fork, page faults on everything the
//! child touches and an exit (a few hundred µs, far more than a small program's run). So the
//! server forks one *worker*, which takes an image of its own memory
//! ([`ProcessImage`]) and then runs execution after execution in itself, restoring the image
//! after each: every execution starts from the same memory at the same addresses, as a forked
//! one would. The server only watches the worker: when the worker dies during an execution (a
//! crash that ends the process, `abort`, `_exit`, the time limit, which a timer enforces with
//! `SIGALRM`), the server answers for it, as it would for a forked child, and starts a new
//! worker. `IRS_EXPLORE_FORK=1` (or a worker that cannot take its image) makes the server fork
//! a child per execution instead, which is also how snapshots and their continuations run.
//!
//! Snapshots: a `Snapshot` request's child follows its schedule and, at the next decision,
//! pauses and serves requests itself with the same loop: each `Run` forks a continuation of the
//! paused execution, so a verifier backtracking to that point does not re-run the prefix from
//! `main`. Snapshots nest; `Release` ends the innermost one.
//!
//! The serving loop allocates nothing, so every execution starts from the same heap and a
//! schedule sees the same addresses every time, from `main` or from a snapshot alike.

use crate::explore::fiber_tls::StaticTls;
use crate::explore::process_image::{DescriptorOffsets, ProcessImage};
use crate::program::program_info::ProgramInfo;
use crate::explore::scheduler::{self, monotonic_micros, Continuation};
use crate::explore::stack_pool;
use crate::thread::thread_flag;
use shared_proto::explore_buffer::{BufferWriter, Capacity, Mark};
use shared_proto::explore_protocol::{self as proto, Hello, ProcessEnd, RequestKind, MAX_OUTPUT};
use std::ffi::{c_char, c_int, c_void};
use std::fs::File;
use std::io::Write;
use std::mem::ManuallyDrop;
use std::os::fd::FromRawFd;
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, AtomicUsize, Ordering};
use std::time::Instant;

type UserMain = extern "C" fn(c_int, *mut *mut c_char, *mut *mut c_char) -> c_int;

fn fail(msg: &str) -> ! {
    eprintln!("irs-runtime: {msg}");
    std::process::exit(2)
}

fn env_fd(name: &str) -> c_int {
    std::env::var(name).ok().and_then(|v| v.parse().ok()).unwrap_or_else(|| fail(&format!("IRS_MODE=explore needs {name} (it is started by the irs executor)")))
}

/// Everything the serving loops and executions need, fixed before the first fork.
struct Server {
    argc: c_int,
    argv: *mut *mut c_char,
    envp: *mut *mut c_char,
    user_main: UserMain,
    ctl_in: c_int,
    ctl_out: c_int,
    buffer: *mut u8,
    cap: Capacity,
    /// The file every execution's stdout and stderr go to.
    output: c_int,
    /// What every execution reads as stdin (made its descriptor 0 before each).
    stdin_src: c_int,
    tls: Option<StaticTls>,
    /// `IRS_EXPLORE_DEBUG=FILE`, opened for appending before any execution.
    debug_log: Option<c_int>,
}

static mut SERVER: Option<Server> = None;

fn server() -> &'static Server {
    // SAFETY: set once in `serve` before any fork, read-only afterwards, one thread.
    unsafe { (*std::ptr::addr_of!(SERVER)).as_ref().expect("EXPLORE server set up") }
}

static mut REQUEST: [u8; proto::MAX_REQUEST] = [0; proto::MAX_REQUEST];
static mut RESPONSE: [u8; 4 + proto::MAX_RESPONSE] = [0; 4 + proto::MAX_RESPONSE];
static mut OUTPUT: [u8; MAX_OUTPUT] = [0; MAX_OUTPUT];
const ALT_STACK_BYTES: usize = 64 * 1024;
static mut ALT_STACK: [u8; ALT_STACK_BYTES] = [0; ALT_STACK_BYTES];

/// Serve executions until the executor closes the channel.
pub fn serve(argc: c_int, argv: *mut *mut c_char, envp: *mut *mut c_char, user_main: UserMain, args: Vec<String>) -> ! {
    scheduler::on_pause(pause);
    // Isolation first: this process may stay behind as the server's keeper (DESIGN §7).
    crate::explore::sandbox::enter();
    let ctl_in = env_fd(proto::ENV_CONTROL_IN);
    let ctl_out = env_fd(proto::ENV_CONTROL_OUT);
    let buf_fd = env_fd(proto::ENV_BUFFER_FD);
    let stdin_fd: Option<c_int> = std::env::var(proto::ENV_STDIN_FD).ok().and_then(|v| v.parse().ok());
    let stack_bytes = std::env::var(proto::ENV_STACK_KB).ok().and_then(|v| v.parse::<usize>().ok()).unwrap_or(256) * 1024;
    let cap = Capacity::DEFAULT;
    // SAFETY: process-wide setup in the single-threaded server, before any fork: die with the
    // executor; map its buffer (size checked); install what every execution inherits (crash
    // handlers on an alternate stack; in the server itself they do nothing, no execution being
    // active there); make the output file. (The exit hook is installed before, by `start`.)
    let (buffer, output, dev_null) = unsafe {
        libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL);
        let mut st: libc::stat = std::mem::zeroed();
        if libc::fstat(buf_fd, &mut st) != 0 || (st.st_size as usize) < cap.bytes() {
            fail("the explore buffer is missing or too small");
        }
        let p = libc::mmap(std::ptr::null_mut(), cap.bytes(), libc::PROT_READ | libc::PROT_WRITE, libc::MAP_SHARED, buf_fd, 0);
        if p == libc::MAP_FAILED {
            fail("cannot map the explore buffer");
        }
        let ss = libc::stack_t { ss_sp: std::ptr::addr_of_mut!(ALT_STACK) as *mut c_void, ss_flags: 0, ss_size: ALT_STACK_BYTES };
        libc::sigaltstack(&ss, std::ptr::null_mut());
        for sig in [libc::SIGSEGV, libc::SIGBUS, libc::SIGFPE, libc::SIGILL, libc::SIGABRT] {
            let mut sa: libc::sigaction = std::mem::zeroed();
            sa.sa_sigaction = child_crash as *const () as usize;
            sa.sa_flags = libc::SA_ONSTACK | libc::SA_NODEFER;
            libc::sigaction(sig, &sa, std::ptr::null_mut());
        }
        let output = libc::memfd_create(c"irs-run-output".as_ptr(), libc::MFD_CLOEXEC);
        if output < 0 {
            fail("cannot create the output file of executions");
        }
        (p as *mut u8, output, libc::open(c"/dev/null".as_ptr(), libc::O_RDONLY | libc::O_CLOEXEC))
    };
    let info = ProgramInfo::of_this_process();
    let hello = Hello { protocol: proto::PROTOCOL_VERSION, program_id: info.program_id, argv: args, sites: info.sites, globals: info.globals, image: info.image, problems: info.problems };
    {
        // SAFETY: the descriptor was handed to us by the executor; ManuallyDrop keeps it open.
        let mut out = ManuallyDrop::new(unsafe { File::from_raw_fd(ctl_out) });
        if proto::send(&mut *out, &hello).is_err() {
            std::process::exit(0);
        }
    }
    drop(hello);
    let tls = StaticTls::of_executable();
    // SAFETY: written once, before any fork and before anything reads it.
    unsafe {
        *std::ptr::addr_of_mut!(SERVER) = Some(Server {
            argc,
            argv,
            envp,
            user_main,
            ctl_in,
            ctl_out,
            buffer,
            cap,
            output,
            stdin_src: stdin_fd.unwrap_or(dev_null),
            tls,
            debug_log: std::env::var_os("IRS_EXPLORE_DEBUG").and_then(|p| std::fs::OpenOptions::new().create(true).append(true).open(p).ok()).map(std::os::fd::IntoRawFd::into_raw_fd),
        })
    };
    if !stack_pool::prepare(stack_bytes) {
        fail("cannot map the stacks of logical threads");
    }
    // The program's memory comes from the heap (the image restores it), never from mappings of
    // their own that `malloc` would make for large blocks.
    // SAFETY: an allocator setting, before any execution.
    unsafe { libc::mallopt(libc::M_MMAP_MAX, 0) };
    keep_offsets(0);
    if std::env::var_os(proto::ENV_FORK_EACH).is_some() {
        FORK_EACH.store(true, Ordering::Relaxed);
    } else {
        supervise(Level::Root);
    }
    match serve_loop(Level::Root, None) {
        Continue::Execution(c) => run_forked(c),
    }
}

/// The offsets of the descriptors open where each level's executions start (at the root: before
/// `main`; at a snapshot level: at the pause), set back before each forked execution.
static mut FORK_OFFSETS: [DescriptorOffsets; stack_pool::MAX_LEVELS + 1] = [DescriptorOffsets::NONE; stack_pool::MAX_LEVELS + 1];

fn keep_offsets(level: usize) {
    // SAFETY: one OS thread; written before the level serves, read by its serving loop.
    unsafe { (*std::ptr::addr_of_mut!(FORK_OFFSETS))[level.min(stack_pool::MAX_LEVELS)] = DescriptorOffsets::take() };
}

/// `IRS_EXPLORE_FORK`: a process per execution, at every level. Relaxed: set once, before any
/// fork.
static FORK_EACH: AtomicBool = AtomicBool::new(false);

/// Where a serving loop runs.
#[derive(Clone, Copy)]
enum Level {
    /// The fork server: executions start from `main`.
    Root,
    /// The `level`-th nested paused execution: executions continue it from here. Its serving
    /// loop runs on the host stack of its level, beside the execution's fibers.
    Snapshot { level: usize, mark: Mark, output_len: i64, stdin_offset: i64 },
}

impl Level {
    /// Leave the process (when the executor closes the channel, or releases this level).
    fn leave(self) -> ! {
        match self {
            Level::Root => std::process::exit(0),
            // SAFETY: a paused execution ends without running the program's exit handlers.
            Level::Snapshot { .. } => unsafe { libc::_exit(0) },
        }
    }
}


enum Continue {
    Execution(Continuation),
}

/// What the server and its worker share: a page mapped before the worker is forked. The worker
/// writes it; the server reads it only after the worker has died and been reaped, which orders
/// the worker's writes before the reads (so relaxed accesses suffice).
#[repr(C)]
struct Control {
    /// Set while the worker runs an execution it has not answered yet.
    in_flight: AtomicU32,
    /// When that execution started (`CLOCK_MONOTONIC`, µs).
    started_micros: AtomicU64,
    /// The worker has taken its image and serves.
    ready: AtomicU32,
}

/// Fork the persistent worker of `level` and stand in for it when it dies; returns (to serve
/// by forking per execution) only if a worker cannot run persistently. At a snapshot level the
/// paused execution itself stays untouched in this process: every worker starts from it.
fn supervise(level: Level) {
    // SAFETY: a fresh shared anonymous page, zero-filled, which `Control` fits (all-zero atomics
    // are valid values).
    let control = unsafe {
        let p = libc::mmap(std::ptr::null_mut(), 4096, libc::PROT_READ | libc::PROT_WRITE, libc::MAP_SHARED | libc::MAP_ANONYMOUS, -1, 0);
        if p == libc::MAP_FAILED {
            return;
        }
        &*(p as *const Control)
    };
    let sv = server();
    // SAFETY: the executor's pipe; ManuallyDrop: it stays open.
    let mut output = ManuallyDrop::new(unsafe { File::from_raw_fd(sv.ctl_out) });
    // SAFETY: the response and output buffers of the serving loop, which does not run in this
    // process while a worker lives.
    let (resp_buf, out_buf) = unsafe { (&mut *std::ptr::addr_of_mut!(RESPONSE), &mut *std::ptr::addr_of_mut!(OUTPUT)) };
    loop {
        // SAFETY: getpid has no preconditions.
        let parent = unsafe { libc::getpid() };
        // SAFETY: one thread runs here, so fork is safe.
        let pid = unsafe { libc::fork() };
        if pid == 0 {
            die_with(parent);
            match worker(control, level) {
                Continue::Execution(c) => run_forked(c),
            }
        }
        if pid < 0 {
            return;
        }
        let end = wait(pid, None);
        if crate::explore::sandbox::failed() {
            fail("an execution could not be isolated (said above)");
        }
        if end == ProcessEnd::Exited(0) {
            // The executor closed the channel, or released this level.
            level.leave();
        }
        if control.ready.load(Ordering::Relaxed) == 0 {
            // It could not take its image: serve by forking.
            return;
        }
        if control.in_flight.load(Ordering::Relaxed) != 0 {
            let end = match end {
                ProcessEnd::Signaled(libc::SIGALRM) => ProcessEnd::TimedOut,
                e => e,
            };
            let ended_at = monotonic_micros();
            let micros = ended_at.saturating_sub(control.started_micros.load(Ordering::Relaxed));
            let n = read_output(out_buf);
            let len = proto::encode_response_into(resp_buf, end, micros, 0, ended_at, &out_buf[..n]);
            if output.write_all(&resp_buf[..len]).is_err() {
                level.leave();
            }
        }
        control.in_flight.store(0, Ordering::Relaxed);
        control.ready.store(0, Ordering::Relaxed);
    }
}

/// The persistent worker of `level`: take the image, then serve; returns only in a forked child.
fn worker(control: &Control, level: Level) -> Continue {
    // What is rewritten before each use, or outside the executions' memory: not restored. Of a
    // paused execution's stacks, the live parts are.
    let [pool_a, pool_b, pool_c] = stack_pool::regions();
    let [sems, barriers, rwlocks, rt_locks] = crate::sync::outside_explore_tables();
    let exclude = [
        pool_a,
        pool_b,
        pool_c,
        sems,
        barriers,
        rwlocks,
        rt_locks,
        (std::ptr::addr_of!(REQUEST) as usize, proto::MAX_REQUEST),
        (std::ptr::addr_of!(RESPONSE) as usize, 4 + proto::MAX_RESPONSE),
        (std::ptr::addr_of!(OUTPUT) as usize, MAX_OUTPUT),
        (std::ptr::addr_of!(ALT_STACK) as usize, ALT_STACK_BYTES),
        scheduler::schedule_region(),
    ];
    let mut stacks = [(0usize, 0usize); shared_proto::explore_buffer::MAX_THREADS];
    let n = if let Level::Snapshot { .. } = level { scheduler::live_stacks(&mut stacks) } else { 0 };
    // The arguments and the environment the program started with, as it may change them
    // (`argv[n] = NULL`, `unsetenv`): every execution starts from them as they are here.
    let image = match ProcessImage::capture(&exclude, &stacks[..n], Some(sv_argv_start())) {
        Ok(image) => image,
        Err(e) => {
            eprintln!("irs-runtime: running one process per execution: {e}");
            // SAFETY: leaving the worker; its parent serves by forking.
            unsafe { libc::_exit(3) }
        }
    };
    // `IRS_EXPLORE_DEBUG=FILE`: say what the worker restores after each execution (its standard
    // error is the executor's to read).
    // Opened by the server, outside the executions' private view of the file system.
    if let Some(fd) = server().debug_log {
        let (bytes, ranges) = image.size();
        let line = format!("worker image (level {}): {bytes} bytes in {ranges} ranges\n", match level { Level::Root => 0, Level::Snapshot { level, .. } => level });
        // SAFETY: the server's descriptor, kept open (ManuallyDrop).
        let _ = ManuallyDrop::new(unsafe { File::from_raw_fd(fd) }).write_all(line.as_bytes());
    }
    control.ready.store(1, Ordering::Relaxed);
    serve_loop(level, Some((&image, control)))
}

/// Where the initial stack's part that the program may change begins: `argv`'s array (above it:
/// the environment's, the auxiliary vector and their strings; below it: the frames of the
/// serving loop, which restores).
fn sv_argv_start() -> usize {
    server().argv as usize
}

/// Read requests and serve them; returns only in a forked child, with what it should do. With
/// `persistent` (the worker), runs run in this process and the image is restored after each.
fn serve_loop(level: Level, persistent: Option<(&ProcessImage, &Control)>) -> Continue {
    let sv = server();
    // SAFETY: the loop's own static buffers; one thread, and forked children use their copies.
    let (req_buf, resp_buf, out_buf) = unsafe {
        (&mut *std::ptr::addr_of_mut!(REQUEST), &mut *std::ptr::addr_of_mut!(RESPONSE), &mut *std::ptr::addr_of_mut!(OUTPUT))
    };
    // SAFETY: the executor's pipes; ManuallyDrop: they must stay open in forked children.
    let (mut input, mut output) =
        unsafe { (ManuallyDrop::new(File::from_raw_fd(sv.ctl_in)), ManuallyDrop::new(File::from_raw_fd(sv.ctl_out))) };
    // On this stack, not in memory a worker restores: it adapts across executions.
    let mut spin = proto::SpinBudget::new(REQUEST_SPIN_US);
    // How long the worker's last restore took: part of the next execution's time (a forked
    // execution's time includes its fork and exit; the worker's takes its memory back instead,
    // after answering, while the executor works).
    let mut restored_micros = 0u64;
    loop {
        spin.wait_readable(sv.ctl_in);
        let n = match proto::read_frame_into(&mut *input, req_buf) {
            Ok(n) => n,
            Err(_) => level.leave(),
        };
        let Some(req) = proto::decode_request(&req_buf[..n]) else { level.leave() };
        if req.kind == RequestKind::Release {
            level.leave();
        }
        if persistent.is_none() {
            // A forked execution shares this process's open files: their offsets as where
            // the level's executions start (a worker's image sets them back itself).
            let at = match level {
                Level::Root => 0,
                Level::Snapshot { level, .. } => level,
            };
            // SAFETY: one OS thread; written before this loop started.
            unsafe { (*std::ptr::addr_of!(FORK_OFFSETS))[at.min(stack_pool::MAX_LEVELS)].apply() };
        }
        // Prepare the output and stdin the execution starts with.
        let (output_len, stdin_offset) = match level {
            Level::Root => (0, 0),
            Level::Snapshot { output_len, stdin_offset, .. } => (output_len, stdin_offset),
        };
        // SAFETY: our own descriptors. Descriptor 0 is the execution's input, shared with every
        // execution started from here; one runs at a time, so rewinding it here gives each its
        // input from where it starts. (Opening it anew per execution, through /proc, cost more
        // than the rest of an empty execution's set-up.)
        unsafe {
            libc::lseek(sv.output, output_len, libc::SEEK_SET);
            if let Level::Root = level {
                libc::dup2(sv.stdin_src, 0);
            }
            libc::lseek(0, stdin_offset, libc::SEEK_SET);
        }
        let snapshot = req.kind == RequestKind::Snapshot;
        let started = Instant::now();
        let c = Continuation { schedule_len: req.schedule_len(), policy: req.policy, snapshot_at: snapshot.then_some(req.schedule_len() as u32) };
        if let (Some((image, control)), false) = (persistent, snapshot) {
            control.started_micros.store(monotonic_micros(), Ordering::Relaxed);
            control.in_flight.store(1, Ordering::Relaxed);
            crate::explore::sandbox::before_execution();
            scheduler::load_schedule(&req);
            set_timer(req.timeout_ms);
            match level {
                Level::Root => execute(c, true),
                Level::Snapshot { level, mark, .. } => {
                    scheduler::restart_from(mark);
                    scheduler::resume(level, c, true);
                }
            }
            set_timer(0);
            let ended_at = monotonic_micros();
            let micros = started.elapsed().as_micros() as u64 + restored_micros;
            let n = read_output(out_buf);
            let len = proto::encode_response_into(resp_buf, ProcessEnd::Exited(0), micros, restored_micros, ended_at, &out_buf[..n]);
            control.in_flight.store(0, Ordering::Relaxed);
            if output.write_all(&resp_buf[..len]).is_err() {
                level.leave();
            }
            // Restored after the answer, not before: the executor reads the trace (shared
            // memory, not part of the image) and decides the next schedule meanwhile, so the
            // restore runs on the other core off the critical path. A next request waits in the
            // pipe until it is done.
            // SAFETY: the execution has ended and nothing of it runs any more; this loop keeps
            // nothing in restored memory across the call (its buffers are excluded, its state is
            // on this stack).
            let restoring = Instant::now();
            unsafe { image.restore() };
            restored_micros = restoring.elapsed().as_micros() as u64;
            continue;
        }
        // SAFETY: getpid has no preconditions.
        let parent = unsafe { libc::getpid() };
        // SAFETY: one thread runs here (every logical thread is a fiber), so fork is safe.
        let pid = unsafe { libc::fork() };
        if pid == 0 {
            die_with(parent);
            crate::explore::sandbox::before_execution();
            scheduler::load_schedule(&req);
            if snapshot {
                // Reaching the pause may take at most the time limit; pausing disarms it.
                // SAFETY: arming an alarm in our own process.
                unsafe { libc::alarm(req.timeout_ms.div_ceil(1000).clamp(1, u32::MAX as u64) as u32) };
            }
            match level {
                Level::Root => return Continue::Execution(c),
                Level::Snapshot { level, mark, .. } => {
                    if let Some((image, _)) = persistent {
                        // The worker's image is no part of the execution this child goes on
                        // with, and a snapshot taken in it would otherwise copy it (megabytes
                        // per nested level, restored after every run there). (From the root,
                        // returning drops it.)
                        // SAFETY: this process never restores the image, and never returns to
                        // drop it: it ends, or serves a new level with an image of its own.
                        unsafe { image.unmap() };
                    }
                    // The paused execution goes on in this process, which it ends.
                    scheduler::restart_from(mark);
                    scheduler::resume(level, c, false);
                    unreachable!("a forked continuation ends its process");
                }
            }
        }
        let setup_micros = started.elapsed().as_micros() as u64;
        // A snapshot's process lives until it is released: no time limit while it serves.
        let end = if pid < 0 {
            ProcessEnd::Signaled(0)
        } else if snapshot {
            match wait(pid, None) {
                ProcessEnd::Signaled(libc::SIGALRM) => ProcessEnd::TimedOut,
                e => e,
            }
        } else {
            wait(pid, Some(req.timeout_ms))
        };
        if crate::explore::sandbox::failed() {
            fail("an execution could not be isolated (said above)");
        }
        let ended_at = monotonic_micros();
        let micros = started.elapsed().as_micros() as u64;
        let n = read_output(out_buf);
        let len = proto::encode_response_into(resp_buf, end, micros, setup_micros, ended_at, &out_buf[..n]);
        if output.write_all(&resp_buf[..len]).is_err() {
            level.leave();
        }
    }
}

/// In a child just forked from `parent`: die when the parent dies. A parent that died before the
/// child asked for that goes unwatched (the executor kills a server whose hello it refuses, which
/// may be just as the server forks its worker): then the child leaves at once, instead of
/// holding the executor's pipes open for good.
fn die_with(parent: libc::pid_t) {
    // SAFETY: asking for a signal at our parent's death, then reading our parent's pid.
    unsafe {
        libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL);
        if libc::getppid() != parent {
            libc::_exit(0);
        }
    }
}

/// What the execution printed: the output file up to its offset, which every execution starts
/// at the offset it starts from (the file is not truncated: what lies beyond is an earlier
/// execution's and is not read).
fn read_output(out_buf: &mut [u8]) -> usize {
    let sv = server();
    // SAFETY: reading our own memfd's offset and contents into our buffer.
    unsafe {
        let end = libc::lseek(sv.output, 0, libc::SEEK_CUR).max(0) as usize;
        libc::pread(sv.output, out_buf.as_mut_ptr() as *mut c_void, end.min(MAX_OUTPUT), 0).max(0) as usize
    }
}

/// How long a serving loop polls for the next request at most before it sleeps in `read`: the
/// verifier decides the next execution in about 100 µs (see `explore_protocol::SpinBudget`).
const REQUEST_SPIN_US: u32 = 2000;

/// Arm (or, with 0, disarm) the time limit of a persistent execution: `SIGALRM`, whose default
/// action ends the worker, which the server then reports as a time-out.
fn set_timer(ms: u64) {
    let tv = |us: u64| libc::timeval { tv_sec: (us / 1_000_000) as libc::time_t, tv_usec: (us % 1_000_000) as libc::suseconds_t };
    let t = libc::itimerval { it_interval: tv(0), it_value: tv(ms.saturating_mul(1000)) };
    // SAFETY: setting our own process's real-time timer.
    unsafe { libc::setitimer(libc::ITIMER_REAL, &t, std::ptr::null_mut()) };
}

/// What an execution paused at a snapshot level left for its host: where its buffer, output and
/// input stood.
#[derive(Clone, Copy)]
struct Paused {
    mark: Mark,
    output_len: i64,
    stdin_offset: i64,
}

struct PausedTable(std::cell::UnsafeCell<[Option<Paused>; stack_pool::MAX_LEVELS + 1]>);

// SAFETY: one OS thread: written by `pause`, read by the host it switches to.
unsafe impl Sync for PausedTable {}

static PAUSED: PausedTable = PausedTable(std::cell::UnsafeCell::new([None; stack_pool::MAX_LEVELS + 1]));

/// The snapshot level this process serves (0: the root). Relaxed: one OS thread.
static LEVEL: AtomicUsize = AtomicUsize::new(0);

/// Pause the running execution at a decision (called by the scheduler, in the process forked
/// for the snapshot): answer that it is ready, then serve continuations of it from a host fiber
/// of the next level, by a persistent worker like the root's (or by forking, with
/// `IRS_EXPLORE_FORK`). Returns in each continuation, with what it should do.
fn pause() -> Continuation {
    let sv = server();
    // SAFETY: reading positions of our own descriptors; disarming our own alarm.
    let (output_len, stdin_offset) = unsafe {
        libc::alarm(0);
        // Unflushed stdio output stays in the process and is inherited by every continuation.
        (libc::lseek(sv.output, 0, libc::SEEK_CUR).max(0), libc::lseek(0, 0, libc::SEEK_CUR).max(0))
    };
    let mark = scheduler::buffer_mark();
    // An execution that changed its view of the file system cannot be shared by continuations
    // (each would see the others' changes): it declines and ends; the level that made it
    // answers next, as for a release.
    let ready = crate::explore::sandbox::allows_pause();
    // SAFETY: the response buffer, used by this process only.
    let resp_buf = unsafe { &mut *std::ptr::addr_of_mut!(RESPONSE) };
    let end = if ready { ProcessEnd::SnapshotReady } else { ProcessEnd::SnapshotDeclined };
    let len = proto::encode_response_into(resp_buf, end, 0, 0, monotonic_micros(), &[]);
    // SAFETY: the executor's pipe, kept open (ManuallyDrop).
    let mut output = ManuallyDrop::new(unsafe { File::from_raw_fd(sv.ctl_out) });
    if output.write_all(&resp_buf[..len]).is_err() || !ready {
        // SAFETY: nobody is listening any more, or the pause was declined.
        unsafe { libc::_exit(0) }
    }
    let level = LEVEL.fetch_add(1, Ordering::Relaxed) + 1;
    // SAFETY: one OS thread; the host reads it as soon as it runs.
    unsafe { (*PAUSED.0.get())[level.min(stack_pool::MAX_LEVELS)] = Some(Paused { mark, output_len, stdin_offset }) };
    scheduler::pause_to_host(level, serve_paused)
}

/// The host of a paused execution (a fiber of its own; `arg` is its level): serve it.
extern "C" fn serve_paused(arg: *mut c_void) {
    let level = arg as usize;
    // SAFETY: written by `pause` before it switched here (one OS thread).
    let p = unsafe { (*PAUSED.0.get())[level] }.expect("a pause records where it stood");
    let at = Level::Snapshot { level, mark: p.mark, output_len: p.output_len, stdin_offset: p.stdin_offset };
    keep_offsets(level);
    if !FORK_EACH.load(Ordering::Relaxed) {
        supervise(at);
    }
    match serve_loop(at, None) {
        Continue::Execution(_) => unreachable!("continuations of a paused execution are resumed, not returned"),
    }
}

/// A process forked for one execution (or for a snapshot): run it; it ends the process.
fn run_forked(c: Continuation) -> ! {
    execute(c, false);
    unreachable!("a forked execution ends its process")
}

/// Set up the execution's descriptors and scheduler and run `main` as `T0`. With
/// `return_to_host`, returns when it has ended.
fn execute(c: Continuation, return_to_host: bool) {
    let sv = server();
    // SAFETY: pointing the execution's stdout and stderr at the output file, before any user
    // code runs; only this thread exists.
    unsafe {
        libc::dup2(sv.output, 1);
        libc::dup2(sv.output, 2);
    }
    // SAFETY: the shared mapping of `cap.bytes()` bytes made by `serve`; in this process
    // nothing else uses it (the server waits; the executor reads only after the execution).
    let buffer: &'static mut [u8] = unsafe { std::slice::from_raw_parts_mut(sv.buffer, sv.cap.bytes()) };
    let Some(writer) = BufferWriter::init(buffer, sv.cap) else {
        // SAFETY: leaving the process.
        unsafe { libc::_exit(3) }
    };
    if let Err(e) = scheduler::init(writer, c, sv.tls, run_main) {
        fail(e);
    }
    scheduler::run(return_to_host);
}

/// `T0`: the program's `main`.
extern "C" fn run_main(_: *mut c_void) {
    let sv = server();
    thread_flag::set_active(true);
    let code = (sv.user_main)(sv.argc, sv.argv, sv.envp);
    scheduler::main_returned(code)
}

/// Wait for a child, killing it when it outlives `timeout_ms` (if given).
fn wait(pid: libc::pid_t, timeout_ms: Option<u64>) -> ProcessEnd {
    // SAFETY: pidfd_open, poll, kill and waitpid on our own child.
    unsafe {
        let mut timed_out = false;
        if let Some(ms) = timeout_ms {
            let pidfd = libc::syscall(libc::SYS_pidfd_open, pid, 0) as c_int;
            if pidfd >= 0 {
                let mut p = libc::pollfd { fd: pidfd, events: libc::POLLIN, revents: 0 };
                let r = loop {
                    let r = libc::poll(&mut p, 1, ms.min(i32::MAX as u64) as c_int);
                    if r >= 0 || *libc::__errno_location() != libc::EINTR {
                        break r;
                    }
                };
                timed_out = r == 0;
                libc::close(pidfd);
            } else {
                let deadline = Instant::now() + std::time::Duration::from_millis(ms);
                let mut status = 0;
                loop {
                    if libc::waitpid(pid, &mut status, libc::WNOHANG) == pid {
                        return decode(status);
                    }
                    if Instant::now() >= deadline {
                        timed_out = true;
                        break;
                    }
                    std::thread::sleep(std::time::Duration::from_micros(200));
                }
            }
            if timed_out {
                libc::kill(pid, libc::SIGKILL);
            }
        }
        let mut status = 0;
        while libc::waitpid(pid, &mut status, 0) < 0 && *libc::__errno_location() == libc::EINTR {}
        if timed_out {
            ProcessEnd::TimedOut
        } else {
            decode(status)
        }
    }
}

fn decode(status: c_int) -> ProcessEnd {
    if libc::WIFSIGNALED(status) {
        ProcessEnd::Signaled(libc::WTERMSIG(status))
    } else {
        ProcessEnd::Exited(libc::WEXITSTATUS(status))
    }
}

extern "C" fn child_crash(sig: c_int) {
    if scheduler::active() && sig != libc::SIGABRT {
        // The thread halts and the others go on: a crash is one thread's failure, like a
        // violation. The handler's frame, on the alternate stack, is abandoned; the unblocked
        // signal (SA_NODEFER) can be taken again by another thread.
        scheduler::crashed(sig);
    }
    scheduler::record_signal(sig);
    // SAFETY: restore the default action and re-raise: the process dies of the signal.
    unsafe {
        libc::signal(sig, libc::SIG_DFL);
        libc::raise(sig);
    }
}
