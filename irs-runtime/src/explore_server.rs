//! EXPLORE's fork server (DESIGN §7, issue 3). Started by the executor with two pipes and a
//! shared buffer, the program's runtime becomes a server before any user code runs, while only
//! the main thread exists: for each request it forks a child that runs `main` under the
//! controlled [`scheduler`](crate::scheduler), waits for it (killing it at the time limit), and
//! answers with how the process ended and what it printed. The child writes its trace into the
//! shared buffer as it goes.

use crate::program_info::ProgramInfo;
use crate::scheduler;
use crate::fiber_tls::StaticTls;
use crate::thread_flag;
use shared_proto::explore_buffer::{BufferWriter, Capacity, ChildOutcome};
use shared_proto::explore_protocol::{self as proto, Hello, ProcessEnd, RequestView, MAX_OUTPUT};
use std::ffi::{c_char, c_int, c_void};
use std::fs::File;
use std::io::Write;
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

/// Serve executions until the executor closes the channel.
pub fn serve(argc: c_int, argv: *mut *mut c_char, envp: *mut *mut c_char, user_main: UserMain, args: Vec<String>) -> ! {
    let ctl_in = env_fd(proto::ENV_CONTROL_IN);
    let ctl_out = env_fd(proto::ENV_CONTROL_OUT);
    let buf_fd = env_fd(proto::ENV_BUFFER_FD);
    let stdin_fd: Option<c_int> = std::env::var(proto::ENV_STDIN_FD).ok().and_then(|v| v.parse().ok());
    let stack_bytes = std::env::var(proto::ENV_STACK_KB).ok().and_then(|v| v.parse::<usize>().ok()).unwrap_or(256) * 1024;
    let cap = Capacity::DEFAULT;
    // SAFETY: die with the executor instead of lingering.
    unsafe { libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL) };
    // SAFETY: mapping the executor's buffer; its size is checked by the executor and here.
    let buffer = unsafe {
        let mut st: libc::stat = std::mem::zeroed();
        if libc::fstat(buf_fd, &mut st) != 0 || (st.st_size as usize) < cap.bytes() {
            fail("the explore buffer is missing or too small");
        }
        let p = libc::mmap(std::ptr::null_mut(), cap.bytes(), libc::PROT_READ | libc::PROT_WRITE, libc::MAP_SHARED, buf_fd, 0);
        if p == libc::MAP_FAILED {
            fail("cannot map the explore buffer");
        }
        p as *mut u8
    };
    // SAFETY: the descriptors were handed to us by the executor and are ours alone.
    let (mut input, mut output) = unsafe { (File::from_raw_fd(ctl_in), File::from_raw_fd(ctl_out)) };
    let info = ProgramInfo::of_this_process();
    let hello = Hello { protocol: proto::PROTOCOL_VERSION, program_id: info.program_id, argv: args, sites: info.sites, globals: info.globals, problems: info.problems };
    if proto::send(&mut output, &hello).is_err() {
        std::process::exit(0);
    }
    drop(hello);
    let setup = Setup::once(stdin_fd);
    // From here on the loop allocates nothing: every child is forked from the same heap, so a
    // schedule sees the same addresses in every execution.
    // SAFETY: the server is single-threaded; these buffers are used by this loop only.
    let (req_buf, resp_buf) = unsafe { (&mut *std::ptr::addr_of_mut!(REQUEST), &mut *std::ptr::addr_of_mut!(RESPONSE)) };
    loop {
        let n = match proto::read_frame_into(&mut input, req_buf) {
            Ok(n) => n,
            Err(_) => std::process::exit(0),
        };
        let Some(req) = proto::decode_request(&req_buf[..n]) else { std::process::exit(0) };
        let len = run_one(&req, argc, argv, envp, user_main, buffer, cap, &setup, stack_bytes, (ctl_in, ctl_out), resp_buf);
        if output.write_all(&resp_buf[..len]).is_err() {
            std::process::exit(0);
        }
    }
}

static mut REQUEST: [u8; proto::MAX_REQUEST] = [0; proto::MAX_REQUEST];
static mut RESPONSE: [u8; 4 + proto::MAX_RESPONSE] = [0; 4 + proto::MAX_RESPONSE];

/// Run one execution; writes the response frame into `resp` and returns its length.
#[allow(clippy::too_many_arguments)]
fn run_one(
    req: &RequestView,
    argc: c_int,
    argv: *mut *mut c_char,
    envp: *mut *mut c_char,
    user_main: UserMain,
    buffer: *mut u8,
    cap: Capacity,
    setup: &Setup,
    stack_bytes: usize,
    control: (c_int, c_int),
    resp: &mut [u8],
) -> usize {
    let out_fd = setup.output;
    // SAFETY: emptying the reused output file for this execution.
    unsafe {
        libc::ftruncate(out_fd, 0);
        libc::lseek(out_fd, 0, libc::SEEK_SET);
    }
    let started = Instant::now();
    // SAFETY: the server is single-threaded here (no user code has run), so fork is safe.
    let pid = unsafe { libc::fork() };
    if pid == 0 {
        child(req, argc, argv, envp, user_main, buffer, cap, setup, stack_bytes, control);
    }
    let fork_micros = started.elapsed().as_micros() as u64;
    let end = if pid < 0 { ProcessEnd::Signaled(0) } else { wait(pid, req.timeout_ms) };
    let micros = started.elapsed().as_micros() as u64;
    // SAFETY: single-threaded server; this buffer is used here only.
    let out = unsafe { &mut *std::ptr::addr_of_mut!(OUTPUT) };
    // SAFETY: reading back our own memfd into our buffer.
    let n = unsafe { libc::pread(out_fd, out.as_mut_ptr() as *mut c_void, MAX_OUTPUT, 0) }.max(0) as usize;
    proto::encode_response_into(resp, end, micros, fork_micros, &out[..n])
}

static mut OUTPUT: [u8; MAX_OUTPUT] = [0; MAX_OUTPUT];

/// Wait for the execution, killing it when it outlives the time limit.
fn wait(pid: libc::pid_t, timeout_ms: u64) -> ProcessEnd {
    // SAFETY: pidfd_open on our own child; poll and waitpid on it.
    unsafe {
        let pidfd = libc::syscall(libc::SYS_pidfd_open, pid, 0) as c_int;
        let timed_out;
        if pidfd >= 0 {
            let mut p = libc::pollfd { fd: pidfd, events: libc::POLLIN, revents: 0 };
            let r = libc::poll(&mut p, 1, timeout_ms.min(i32::MAX as u64) as c_int);
            timed_out = r == 0;
            libc::close(pidfd);
        } else {
            let deadline = Instant::now() + std::time::Duration::from_millis(timeout_ms);
            let mut status = 0;
            loop {
                let r = libc::waitpid(pid, &mut status, libc::WNOHANG);
                if r == pid {
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
    scheduler::record_signal(sig);
    // SAFETY: restore the default action and re-raise: the process dies of the signal.
    unsafe {
        libc::signal(sig, libc::SIG_DFL);
        libc::raise(sig);
    }
}

static mut ALT_STACK: [u8; 64 * 1024] = [0; 64 * 1024];

/// What every execution needs and survives `fork`: set up once in the server, so a child does
/// as little as possible (each syscall and page it touches costs every execution).
struct Setup {
    /// The file every execution's stdout and stderr go to, emptied before each execution.
    output: c_int,
    /// What every execution reads as stdin (re-opened per execution to start at its beginning).
    stdin_fd: Option<c_int>,
    dev_null: c_int,
    tls: Option<StaticTls>,
}

impl Setup {
    fn once(stdin_fd: Option<c_int>) -> Setup {
        // SAFETY: process-wide setup in the single-threaded server, before any fork. Handlers,
        // the alternate stack and on_exit registrations are inherited by every child; in the
        // server itself they do nothing (no execution is active there).
        unsafe {
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
            Setup { output, stdin_fd, dev_null: libc::open(c"/dev/null".as_ptr(), libc::O_RDONLY | libc::O_CLOEXEC), tls: StaticTls::of_executable() }
        }
    }
}

#[allow(clippy::too_many_arguments)]
fn child(
    req: &RequestView,
    argc: c_int,
    argv: *mut *mut c_char,
    envp: *mut *mut c_char,
    user_main: UserMain,
    buffer: *mut u8,
    cap: Capacity,
    setup: &Setup,
    stack_bytes: usize,
    control: (c_int, c_int),
) -> ! {
    // SAFETY: setting up the freshly forked child's descriptors before any user code runs;
    // only this thread exists.
    unsafe {
        libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL);
        libc::close(control.0);
        libc::close(control.1);
        libc::dup2(setup.output, 1);
        libc::dup2(setup.output, 2);
        // Every execution reads its stdin from the start: a new open file description.
        match setup.stdin_fd {
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
                libc::dup2(setup.dev_null, 0);
            }
        }
    }
    // SAFETY: the shared mapping of `cap.bytes()` bytes made by `serve`; in this child process
    // nothing else uses it (the server waits, the executor reads only after the child ended).
    let buffer: &'static mut [u8] = unsafe { std::slice::from_raw_parts_mut(buffer, cap.bytes()) };
    let Some(writer) = BufferWriter::init(buffer, cap) else {
        // SAFETY: leaving the child.
        unsafe { libc::_exit(3) }
    };
    let schedule: Vec<u32> = (0..req.schedule_len()).map(|i| req.schedule_at(i)).collect();
    scheduler::init(writer, schedule, req.random_seed, stack_bytes, setup.tls);
    thread_flag::set_active(true);
    let code = user_main(argc, argv, envp);
    scheduler::main_returned(code)
}
