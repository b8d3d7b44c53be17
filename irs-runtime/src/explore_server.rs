//! EXPLORE's fork server (DESIGN §7, issue 3). Started by the executor with two pipes and a
//! shared buffer, the program's runtime becomes a server before any user code runs, while only
//! the main thread exists. For each request it forks a child that runs `main` under the
//! controlled [`scheduler`](crate::scheduler), waits for it (killing it at the time limit), and
//! answers with how the process ended and what it printed. The child writes its trace into the
//! shared buffer as it goes.
//!
//! Snapshots: a `Snapshot` request's child follows its schedule and, at the next decision,
//! pauses and serves requests itself with the same loop: each `Run` forks a continuation of the
//! paused execution, so a verifier backtracking to that point does not re-run the prefix from
//! `main`. Snapshots nest; `Release` ends the innermost one.
//!
//! The serving loop allocates nothing, so every execution is forked from the same heap and a
//! schedule sees the same addresses every time, from `main` or from a snapshot alike.

use crate::fiber_tls::StaticTls;
use crate::program_info::ProgramInfo;
use crate::scheduler;
use crate::thread_flag;
use shared_proto::explore_buffer::{BufferWriter, Capacity, ChildOutcome, Mark};
use shared_proto::explore_protocol::{self as proto, Hello, Policy, ProcessEnd, RequestKind, MAX_OUTPUT};
use std::ffi::{c_char, c_int, c_void};
use std::fs::File;
use std::io::Write;
use std::mem::ManuallyDrop;
use std::os::fd::FromRawFd;
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
    stack_bytes: usize,
    /// The file every execution's stdout and stderr go to.
    output: c_int,
    /// What every execution reads as stdin (re-opened per execution to start at its beginning).
    stdin_fd: Option<c_int>,
    dev_null: c_int,
    tls: Option<StaticTls>,
}

static mut SERVER: Option<Server> = None;

fn server() -> &'static Server {
    // SAFETY: set once in `serve` before any fork, read-only afterwards, one thread.
    unsafe { (*std::ptr::addr_of!(SERVER)).as_ref().expect("EXPLORE server set up") }
}

static mut REQUEST: [u8; proto::MAX_REQUEST] = [0; proto::MAX_REQUEST];
static mut RESPONSE: [u8; 4 + proto::MAX_RESPONSE] = [0; 4 + proto::MAX_RESPONSE];
static mut OUTPUT: [u8; MAX_OUTPUT] = [0; MAX_OUTPUT];
static mut ALT_STACK: [u8; 64 * 1024] = [0; 64 * 1024];

/// Serve executions until the executor closes the channel.
pub fn serve(argc: c_int, argv: *mut *mut c_char, envp: *mut *mut c_char, user_main: UserMain, args: Vec<String>) -> ! {
    let ctl_in = env_fd(proto::ENV_CONTROL_IN);
    let ctl_out = env_fd(proto::ENV_CONTROL_OUT);
    let buf_fd = env_fd(proto::ENV_BUFFER_FD);
    let stdin_fd: Option<c_int> = std::env::var(proto::ENV_STDIN_FD).ok().and_then(|v| v.parse().ok());
    let stack_bytes = std::env::var(proto::ENV_STACK_KB).ok().and_then(|v| v.parse::<usize>().ok()).unwrap_or(256) * 1024;
    let cap = Capacity::DEFAULT;
    // SAFETY: process-wide setup in the single-threaded server, before any fork: die with the
    // executor; map its buffer (size checked); install what every execution inherits (crash
    // handlers on an alternate stack, the exit hook; in the server itself they do nothing, no
    // execution being active there); make the output file.
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
        let ss = libc::stack_t { ss_sp: std::ptr::addr_of_mut!(ALT_STACK) as *mut c_void, ss_flags: 0, ss_size: 64 * 1024 };
        libc::sigaltstack(&ss, std::ptr::null_mut());
        for sig in [libc::SIGSEGV, libc::SIGBUS, libc::SIGFPE, libc::SIGILL, libc::SIGABRT] {
            let mut sa: libc::sigaction = std::mem::zeroed();
            sa.sa_sigaction = child_crash as *const () as usize;
            sa.sa_flags = libc::SA_ONSTACK | libc::SA_NODEFER;
            libc::sigaction(sig, &sa, std::ptr::null_mut());
        }
        on_exit(child_exit, std::ptr::null_mut());
        let output = libc::memfd_create(c"irs-run-output".as_ptr(), libc::MFD_CLOEXEC);
        if output < 0 {
            fail("cannot create the output file of executions");
        }
        (p as *mut u8, output, libc::open(c"/dev/null".as_ptr(), libc::O_RDONLY | libc::O_CLOEXEC))
    };
    let info = ProgramInfo::of_this_process();
    let hello = Hello { protocol: proto::PROTOCOL_VERSION, program_id: info.program_id, argv: args, sites: info.sites, globals: info.globals, problems: info.problems };
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
            stack_bytes,
            output,
            stdin_fd,
            dev_null,
            tls,
        })
    };
    match serve_loop(Level::Root) {
        Continue::Execution(c) => run_execution(c),
    }
}

/// Where a serving loop runs.
#[derive(Clone, Copy)]
enum Level {
    /// The fork server: children start from `main`.
    Root,
    /// A paused execution: children continue it from here.
    Snapshot { mark: Mark, output_len: i64, stdin_offset: i64 },
}

/// What a forked child of a serving loop does. Its schedule is in [`scheduler::SCHEDULE`]:
/// not on the heap, whose layout every execution of a schedule must share (from `main` or from
/// a snapshot alike).
pub struct Continuation {
    pub schedule_len: usize,
    pub policy: Policy,
    /// Pause at the decision of this step (a nested snapshot).
    pub snapshot_at: Option<u32>,
}

enum Continue {
    Execution(Continuation),
}

/// Read requests and serve them; returns only in a forked child, with what it should do.
fn serve_loop(level: Level) -> Continue {
    let sv = server();
    // SAFETY: the loop's own static buffers; one thread, and forked children use their copies.
    let (req_buf, resp_buf, out_buf) = unsafe {
        (&mut *std::ptr::addr_of_mut!(REQUEST), &mut *std::ptr::addr_of_mut!(RESPONSE), &mut *std::ptr::addr_of_mut!(OUTPUT))
    };
    // SAFETY: the executor's pipes; ManuallyDrop: they must stay open in forked children.
    let (mut input, mut output) =
        unsafe { (ManuallyDrop::new(File::from_raw_fd(sv.ctl_in)), ManuallyDrop::new(File::from_raw_fd(sv.ctl_out))) };
    let leave = |level: Level| -> ! {
        match level {
            Level::Root => std::process::exit(0),
            // SAFETY: a paused execution ends without running the program's exit handlers.
            Level::Snapshot { .. } => unsafe { libc::_exit(0) },
        }
    };
    loop {
        let n = match proto::read_frame_into(&mut *input, req_buf) {
            Ok(n) => n,
            Err(_) => leave(level),
        };
        let Some(req) = proto::decode_request(&req_buf[..n]) else { leave(level) };
        if req.kind == RequestKind::Release {
            leave(level);
        }
        // Prepare the output and stdin the execution starts with.
        let (output_len, stdin_offset) = match level {
            Level::Root => (0, 0),
            Level::Snapshot { output_len, stdin_offset, .. } => (output_len, stdin_offset),
        };
        // SAFETY: our own descriptors.
        unsafe {
            libc::ftruncate(sv.output, output_len);
            libc::lseek(sv.output, output_len, libc::SEEK_SET);
            if let Level::Snapshot { .. } = level {
                libc::lseek(0, stdin_offset, libc::SEEK_SET);
            }
        }
        let snapshot = req.kind == RequestKind::Snapshot;
        let started = Instant::now();
        // SAFETY: one thread runs here (every logical thread is a fiber), so fork is safe.
        let pid = unsafe { libc::fork() };
        if pid == 0 {
            // SAFETY: the child dies with its parent.
            unsafe { libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL) };
            scheduler::load_schedule(&req);
            let c = Continuation {
                schedule_len: req.schedule_len(),
                policy: req.policy,
                snapshot_at: snapshot.then_some(req.schedule_len() as u32),
            };
            if snapshot {
                // Reaching the pause may take at most the time limit; pausing disarms it.
                // SAFETY: arming an alarm in our own process.
                unsafe { libc::alarm(req.timeout_ms.div_ceil(1000).clamp(1, u32::MAX as u64) as u32) };
            }
            if let Level::Snapshot { mark, .. } = level {
                scheduler::restart_from(mark);
            }
            return Continue::Execution(c);
        }
        let fork_micros = started.elapsed().as_micros() as u64;
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
        let micros = started.elapsed().as_micros() as u64;
        // SAFETY: reading back our own memfd into our buffer.
        let n = unsafe { libc::pread(sv.output, out_buf.as_mut_ptr() as *mut c_void, MAX_OUTPUT, 0) }.max(0) as usize;
        let len = proto::encode_response_into(resp_buf, end, micros, fork_micros, &out_buf[..n]);
        if output.write_all(&resp_buf[..len]).is_err() {
            leave(level);
        }
    }
}

/// Pause the running execution at a decision and serve continuations of it (called by the
/// scheduler in the snapshot's process). Returns in each continuation.
pub fn pause() -> Continuation {
    let sv = server();
    // SAFETY: reading positions of our own descriptors; disarming our own alarm.
    let (output_len, stdin_offset) = unsafe {
        libc::alarm(0);
        // Unflushed stdio output stays in the process and is inherited by every continuation.
        let mut st: libc::stat = std::mem::zeroed();
        libc::fstat(sv.output, &mut st);
        (st.st_size, libc::lseek(0, 0, libc::SEEK_CUR).max(0))
    };
    let mark = scheduler::buffer_mark();
    // SAFETY: the response buffer, used by this process only.
    let resp_buf = unsafe { &mut *std::ptr::addr_of_mut!(RESPONSE) };
    let len = proto::encode_response_into(resp_buf, ProcessEnd::SnapshotReady, 0, 0, &[]);
    // SAFETY: the executor's pipe, kept open (ManuallyDrop).
    let mut output = ManuallyDrop::new(unsafe { File::from_raw_fd(sv.ctl_out) });
    if output.write_all(&resp_buf[..len]).is_err() {
        // SAFETY: nobody is listening any more.
        unsafe { libc::_exit(0) }
    }
    match serve_loop(Level::Snapshot { mark, output_len, stdin_offset }) {
        Continue::Execution(c) => c,
    }
}

/// A child of the root server: set up its descriptors and run `main` under the scheduler.
fn run_execution(c: Continuation) -> ! {
    let sv = server();
    // SAFETY: setting up the freshly forked child's descriptors before any user code runs;
    // only this thread exists.
    unsafe {
        libc::dup2(sv.output, 1);
        libc::dup2(sv.output, 2);
        // Every execution reads its stdin from the start: a new open file description.
        match sv.stdin_fd {
            Some(fd) => {
                let mut path = *b"/proc/self/fd/0000000000\0";
                let digits = fd.to_string();
                path[14..14 + digits.len()].copy_from_slice(digits.as_bytes());
                path[14 + digits.len()] = 0;
                let input = libc::open(path.as_ptr() as *const c_char, libc::O_RDONLY);
                if input >= 0 {
                    libc::dup2(input, 0);
                    libc::close(input);
                }
            }
            None => {
                libc::dup2(sv.dev_null, 0);
            }
        }
    }
    // SAFETY: the shared mapping of `cap.bytes()` bytes made by `serve`; in this process
    // nothing else uses it (the server waits; the executor reads only after we ended).
    let buffer: &'static mut [u8] = unsafe { std::slice::from_raw_parts_mut(sv.buffer, sv.cap.bytes()) };
    let Some(writer) = BufferWriter::init(buffer, sv.cap) else {
        // SAFETY: leaving the child.
        unsafe { libc::_exit(3) }
    };
    scheduler::init(writer, c, sv.stack_bytes, sv.tls);
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

extern "C" {
    fn on_exit(f: extern "C" fn(c_int, *mut c_void), arg: *mut c_void) -> c_int;
}

extern "C" fn child_exit(status: c_int, _arg: *mut c_void) {
    if scheduler::active() {
        scheduler::finish(ChildOutcome::Exit(status));
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
