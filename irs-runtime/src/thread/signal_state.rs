//! What the runtime's other parts need to know about the program's signal handlers (the
//! trampoline is `signals`): whether the calling thread runs one now (`inside`: then nothing of
//! irs may wait or count an event, DESIGN §4), and, once the program has installed one, a way to
//! keep them out of the runtime's own short critical sections (`Masked`): a handler that waits
//! for another thread while its thread holds a lock of the runtime would make that thread wait
//! for the handler in turn.

use std::cell::Cell;
use std::sync::atomic::{AtomicBool, Ordering};

thread_local! {
    /// How many handlers the calling thread is running (nested signals). A const-initialised
    /// `Cell` is a plain TLS slot: reading it in a handler takes no lock and allocates nothing.
    static DEPTH: Cell<u32> = const { Cell::new(0) };
}

/// The program has installed a handler of its own (behind the trampoline).
static INSTALLED: AtomicBool = AtomicBool::new(false);

/// Is the calling thread running a signal handler of the program?
pub fn inside() -> bool {
    DEPTH.with(|d| d.get() > 0)
}

/// The calling thread enters a handler; returns whether it is the outermost one.
pub fn enter() -> bool {
    DEPTH.with(|d| {
        let n = d.get();
        d.set(n + 1);
        n == 0
    })
}

/// The calling thread leaves the handler it entered last.
pub fn leave() {
    DEPTH.with(|d| d.set(d.get().saturating_sub(1)));
}

pub fn installed() {
    // Relaxed: a thread that misses it has no handler of the program to be interrupted by
    // except one installed concurrently, which the kernel orders after the sigaction call.
    INSTALLED.store(true, Ordering::Relaxed);
}

/// Signals blocked for the life of the value (nothing when the program installed no handler).
pub struct Masked(Option<libc::sigset_t>);

impl Masked {
    pub fn new() -> Masked {
        // Relaxed: see `installed`.
        if !INSTALLED.load(Ordering::Relaxed) {
            return Masked(None);
        }
        // SAFETY: sigset_t is plain data; sigfillset fills it; pthread_sigmask changes only the
        // calling thread's mask and saves the old one.
        unsafe {
            let mut all: libc::sigset_t = std::mem::zeroed();
            let mut old: libc::sigset_t = std::mem::zeroed();
            libc::sigfillset(&mut all);
            libc::pthread_sigmask(libc::SIG_BLOCK, &all, &mut old);
            Masked(Some(old))
        }
    }
}

impl Drop for Masked {
    fn drop(&mut self) {
        if let Some(old) = self.0 {
            // SAFETY: restores the mask saved by `new`, on the same thread.
            unsafe { libc::pthread_sigmask(libc::SIG_SETMASK, &old, std::ptr::null_mut()) };
        }
    }
}
