//! Signal handlers run outside the event model (DESIGN §3, §4): a handler's memory accesses and
//! calls are no events of anybody, in every mode. A handler interrupts its thread at any
//! instruction, also inside the runtime, while that thread waits for a requirement, holds the
//! turn of a serialised run, or has an event announced and not completed; an event of the
//! handler would be counted as the interrupted thread's next one (and so leave the verified
//! trace), or wait for a turn or a requirement that only the interrupted thread can give (a
//! hang). So a handler never waits on anything of irs: it runs free, as in the plain build.
//!
//! How: `signal` and `sigaction` are routed here (in every thread, free ones included), and a
//! handler the program installs is installed as the runtime's trampoline, which clears the
//! interrupted thread's fast-path flag (so the handler's functions run their plain bodies, no
//! callback at all), marks the thread as inside a handler (`signal_state::inside`: the
//! wrappers and callbacks that a plain body still reaches do only the call itself), calls the
//! program's handler, and restores both. `sigaction`'s and `signal`'s answers name the program's own handlers, never
//! the trampoline.

use crate::thread::signal_state;
use crate::thread::thread_flag;
use std::cell::Cell;
use std::ffi::{c_int, c_void};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

/// Signal numbers, real-time ones included (glibc: up to 64).
const SIGNALS: usize = 65;

/// The program's handler of each signal (0: none of its own), and whether it takes three
/// arguments (`SA_SIGINFO`).
struct Handler {
    function: AtomicUsize,
    siginfo: AtomicBool,
}

#[allow(clippy::declare_interior_mutable_const)]
const NONE: Handler = Handler { function: AtomicUsize::new(0), siginfo: AtomicBool::new(false) };
static HANDLERS: [Handler; SIGNALS] = [NONE; SIGNALS];

thread_local! {
    /// The thread's fast-path flag when its outermost handler began.
    static FLAG: Cell<bool> = const { Cell::new(false) };
}

extern "C" fn trampoline(sig: c_int, info: *mut libc::siginfo_t, context: *mut c_void) {
    let Some(h) = HANDLERS.get(sig as usize) else { return };
    // Acquire: pairs with the release store in `__irs_sigaction`.
    let f = h.function.load(Ordering::Acquire);
    if f == 0 || f == libc::SIG_DFL || f == libc::SIG_IGN {
        return;
    }
    let outer = signal_state::enter();
    if outer {
        FLAG.with(|c| c.set(thread_flag::active()));
        thread_flag::set_active(false);
        if crate::enforce::serial::on() {
            crate::enforce::serial::set_away(true);
        }
    }
    // Relaxed: set together with `function`, ordered by its acquire load above.
    if h.siginfo.load(Ordering::Relaxed) {
        // SAFETY: the program installed `f` as an `SA_SIGINFO` handler of `sig`.
        let f: extern "C" fn(c_int, *mut libc::siginfo_t, *mut c_void) = unsafe { std::mem::transmute(f) };
        f(sig, info, context);
    } else {
        // SAFETY: the program installed `f` as a one-argument handler of `sig`.
        let f: extern "C" fn(c_int) = unsafe { std::mem::transmute(f) };
        f(sig);
    }
    signal_state::leave();
    if outer {
        if crate::enforce::serial::on() {
            crate::enforce::serial::set_away(false);
        }
        thread_flag::set_active(FLAG.with(|c| c.get()));
    }
}

/// Does the runtime stand in for `handler` (a function of the program, not a disposition)?
fn own(handler: usize) -> bool {
    handler != libc::SIG_DFL && handler != libc::SIG_IGN && handler != libc::SIG_ERR
}

/// What the program sees as the handler the kernel has: its own, where the trampoline is.
fn seen(sig: c_int, kernel: usize) -> (usize, bool) {
    if kernel == trampoline as *const () as usize {
        let h = &HANDLERS[sig as usize];
        // Acquire: as in the trampoline; Relaxed: stored before `function` (release).
        return (h.function.load(Ordering::Acquire), h.siginfo.load(Ordering::Relaxed));
    }
    (kernel, false)
}

fn valid(sig: c_int) -> bool {
    sig > 0 && (sig as usize) < SIGNALS
}

/// # Safety
/// Same contract as `sigaction`.
#[no_mangle]
pub unsafe extern "C" fn __irs_sigaction(sig: c_int, act: *const libc::sigaction, old: *mut libc::sigaction, _site: u64) -> c_int {
    if crate::mode::get() == crate::mode::Mode::Off || !valid(sig) {
        // SAFETY: forwarded unchanged.
        return unsafe { libc::sigaction(sig, act, old) };
    }
    let mut mine: Option<libc::sigaction> = None;
    if !act.is_null() {
        // SAFETY: the caller's `act`, a valid `struct sigaction`.
        let a = unsafe { *act };
        if own(a.sa_sigaction) {
            let h = &HANDLERS[sig as usize];
            h.siginfo.store(a.sa_flags & libc::SA_SIGINFO != 0, Ordering::Relaxed);
            // Release: see the trampoline.
            h.function.store(a.sa_sigaction, Ordering::Release);
            signal_state::installed();
            let mut t = a;
            t.sa_sigaction = trampoline as *const () as usize;
            t.sa_flags |= libc::SA_SIGINFO;
            mine = Some(t);
        }
    }
    let act = mine.as_ref().map_or(act, |t| t as *const libc::sigaction);
    // SAFETY: the caller's arguments, with the trampoline in place of its handler.
    let rc = unsafe { libc::sigaction(sig, act, old) };
    if rc == 0 && !old.is_null() {
        // SAFETY: `sigaction` filled `*old`.
        let o = unsafe { &mut *old };
        if o.sa_sigaction == trampoline as *const () as usize {
            let (f, siginfo) = seen(sig, o.sa_sigaction);
            o.sa_sigaction = f;
            if !siginfo {
                o.sa_flags &= !libc::SA_SIGINFO;
            }
        }
    }
    rc
}

/// # Safety
/// Same contract as `signal`.
#[no_mangle]
pub unsafe extern "C" fn __irs_signal(sig: c_int, handler: libc::sighandler_t, site: u64) -> libc::sighandler_t {
    if crate::mode::get() == crate::mode::Mode::Off || !valid(sig) {
        // SAFETY: forwarded unchanged.
        return unsafe { libc::signal(sig, handler) };
    }
    // glibc's `signal`: BSD semantics, the handler stays and interrupted calls restart.
    // SAFETY: a zeroed `struct sigaction` is a valid one; `sigemptyset` fills its mask.
    let mut act: libc::sigaction = unsafe { std::mem::zeroed() };
    act.sa_sigaction = handler;
    act.sa_flags = libc::SA_RESTART;
    // SAFETY: as above.
    unsafe { libc::sigemptyset(&mut act.sa_mask) };
    // SAFETY: see above.
    let mut old: libc::sigaction = unsafe { std::mem::zeroed() };
    // SAFETY: our own, valid arguments.
    if unsafe { __irs_sigaction(sig, &act, &mut old, site) } != 0 {
        return libc::SIG_ERR;
    }
    old.sa_sigaction
}
