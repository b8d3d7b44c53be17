//! The ways a recorded run can end besides `main` returning: `exit()` from any thread
//! (`on_exit`), and fatal signals. Each writes the trace so that no recorded event is lost.

use crate::recorder;
use shared_proto::Outcome;
use std::ffi::{c_int, c_void};

extern "C" {
    /// glibc: like atexit, but the handler receives the exit status.
    fn on_exit(f: extern "C" fn(c_int, *mut c_void), arg: *mut c_void) -> c_int;
}

extern "C" fn at_exit(status: c_int, _arg: *mut c_void) {
    recorder::thread_exit();
    recorder::finish(Outcome::Exit(status), true);
}

const FATAL: [c_int; 8] = [
    libc::SIGSEGV,
    libc::SIGBUS,
    libc::SIGFPE,
    libc::SIGILL,
    libc::SIGABRT,
    libc::SIGINT,
    libc::SIGTERM,
    libc::SIGHUP,
];

extern "C" fn on_fatal_signal(sig: c_int) {
    // SAFETY: restoring the default disposition and arming an alarm are async-signal-safe. The
    // alarm bounds the best-effort trace write below (which allocates): should it ever block,
    // SIGALRM ends the process instead of hanging it.
    unsafe {
        libc::signal(sig, libc::SIG_DFL);
        libc::alarm(2);
    }
    recorder::finish_from_signal(Outcome::Signal(sig));
    // SAFETY: re-raising with the default action ends the process as the signal would have.
    // A synchronous fault (SEGV, BUS, FPE, ILL) also recurs when the handler returns.
    unsafe {
        libc::raise(sig);
    }
}

pub fn install() {
    // SAFETY: registering handlers at start-up, before the program's own code runs.
    unsafe {
        on_exit(at_exit, std::ptr::null_mut());
        for sig in FATAL {
            libc::signal(sig, on_fatal_signal as *const () as libc::sighandler_t);
        }
    }
}
