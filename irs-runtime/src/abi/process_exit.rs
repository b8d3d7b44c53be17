//! How a recorded run can end on a fatal signal: the trace is written so that no recorded event
//! is lost. (An end by `exit` or by `main` returning is the process's end, `process_end`.)

use crate::record::recorder;
use shared_proto::Outcome;
use std::ffi::c_int;

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
    let fault = matches!(sig, libc::SIGSEGV | libc::SIGBUS | libc::SIGFPE | libc::SIGILL);
    // SAFETY: restoring the default disposition and arming an alarm are async-signal-safe. The
    // alarm bounds the best-effort trace write below (which allocates): should it ever block,
    // SIGALRM ends the process instead of hanging it. A fault's default comes back at once (a
    // fault inside the write ends the process); the others' only once the trace is written:
    // another thread's `abort` meanwhile (two failing at once) comes here too and waits for the
    // write, instead of ending the process in the middle of it.
    unsafe {
        if fault {
            libc::signal(sig, libc::SIG_DFL);
        }
        libc::alarm(2);
    }
    recorder::finish_from_signal(Outcome::Signal(sig));
    // SAFETY: re-raising with the default action ends the process as the signal would have.
    // A synchronous fault (SEGV, BUS, FPE, ILL) also recurs when the handler returns.
    unsafe {
        libc::signal(sig, libc::SIG_DFL);
        libc::raise(sig);
    }
}

pub fn install() {
    crate::program::process_end::install_hook();
    // SAFETY: registering handlers at start-up, before the program's own code runs.
    unsafe {
        for sig in FATAL {
            libc::signal(sig, on_fatal_signal as *const () as libc::sighandler_t);
        }
    }
}
