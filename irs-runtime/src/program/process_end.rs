//! The process's end (DESIGN §3): `exit`, `_exit`, `_Exit`, `quick_exit` and `main` returning,
//! which the pass routes here, in every mode.
//!
//! An end is an event of the thread that ends the process (`End`, whose object is the process:
//! one end per process). Its exit handlers (`atexit`, `on_exit`, `at_quick_exit`) and the
//! executable's static destructors then run on that thread, as events like any other, while
//! the other threads go on. Last, the ender *kills* every other live thread (a `Kill` event per
//! thread, whose object is that thread): a killed thread does nothing more. Every event of
//! another thread can thus happen before the end or not at all, which is what the exploration
//! must consider (a verifier that cut the other threads off at the end without a `Kill` event
//! would explore none of the schedules in which they move first).
//!
//! - EXPLORE: the kills are scheduling points of the controlled scheduler, each recording what
//!   the thread it cuts off was about to do ([`crate::explore::scheduler::complete_end`]).
//! - ENFORCE: `End` obeys the prefix's rules; after the handlers, the kills of the verified
//!   trace that are inside the cutoff wait for what they follow there (rule 1) and are never
//!   completed, so a thread that the verified trace cut off stays behind its barrier until the
//!   process is gone ([`crate::enforce::enforcer::end_waits`]).
//! - RECORD: `End` and the kills are recorded.
//! - OFF: the C library's functions, unchanged.
//!
//! Exit handlers registered before the runtime started (by a constructor) and the destructors of
//! shared libraries do not run in EXPLORE and ENFORCE: the end completes from the runtime's own
//! exit hook, which runs after every handler the program registered while running.

use crate::enforce::enforcer;
use crate::mode::{self, Mode};
use crate::record::recorder;
use crate::explore::scheduler;
use shared_proto::{EventKind, ObjectRef, Outcome, SiteId};
use std::cell::UnsafeCell;
use std::ffi::{c_int, c_void};
use std::sync::atomic::{AtomicUsize, Ordering};

extern "C" {
    /// glibc: like atexit, but the handler receives the exit status.
    fn on_exit(f: extern "C" fn(c_int, *mut c_void), arg: *mut c_void) -> c_int;
    /// glue.c: the executable's `.fini_array`, last entry first.
    fn __irs_run_fini_array();
}

/// `quick_exit` handlers: the runtime keeps them (the C library's `quick_exit` leaves the
/// process without a hook in which the end could complete).
const MAX_QUICK: usize = 32;

struct QuickHandlers(UnsafeCell<[Option<extern "C" fn()>; MAX_QUICK]>);

// SAFETY: written by `at_quick_exit` and read by `quick_exit`, which the program calls; it may
// not race them (a handler registered while `quick_exit` runs is undefined behaviour in C), and
// a slot is written before the count that covers it is raised. EXPLORE runs one fiber at a time.
unsafe impl Sync for QuickHandlers {}

static QUICK: QuickHandlers = QuickHandlers(UnsafeCell::new([None; MAX_QUICK]));
/// Handlers registered. Relaxed: see `QuickHandlers`.
static QUICK_COUNT: AtomicUsize = AtomicUsize::new(0);

fn run_quick_handlers() {
    loop {
        let n = QUICK_COUNT.load(Ordering::Relaxed);
        if n == 0 {
            return;
        }
        QUICK_COUNT.store(n - 1, Ordering::Relaxed);
        // SAFETY: see `QuickHandlers`; the slot was written before the count covered it.
        let f = unsafe { (*QUICK.0.get())[n - 1] };
        if let Some(f) = f {
            f();
        }
    }
}

/// Whether a thread has begun the process's end (outside EXPLORE).
static ENDING: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// How long a second thread ending the process waits for the first one's end to complete.
const SECOND_ENDER_WAIT: std::time::Duration = std::time::Duration::from_secs(1);

/// While a trace is recorded: a thread that ends the process while another one is already
/// ending it (`exit` in two threads, or `exit` and `main` returning) waits a little, so that the
/// first one completes the end and writes the trace. Otherwise the C library's `exit` in one
/// thread, finding the handlers taken by the other, leaves with `_exit` at once and cuts the
/// other's write of the trace short (the run ended with no trace). The first end wins in the
/// plain build too whenever the second thread is slow; the wait is bounded, so an exit handler
/// that waits for the second thread costs at most the bound.
fn second_ender_waits() {
    // SeqCst: a rare path; whoever swaps first is the first ender.
    if ENDING.swap(true, std::sync::atomic::Ordering::SeqCst) && recorder::active() {
        std::thread::sleep(SECOND_ENDER_WAIT);
    }
}

/// The `End` event outside EXPLORE (the rules of ENFORCE, the record of RECORD).
fn end_event(site: Option<SiteId>) {
    second_ender_waits();
    if mode::get() == Mode::Enforce && enforcer::constrained() {
        enforcer::before(site);
        if recorder::active() {
            recorder::lock().push(site, EventKind::End, ObjectRef::Process);
        }
        enforcer::after();
    } else if recorder::active() {
        recorder::lock().push(site, EventKind::End, ObjectRef::Process);
    }
}

/// After the exit handlers, outside EXPLORE: the static destructors, then the kills. Returns
/// when the process may go.
fn complete_end(status: c_int) {
    if matches!(mode::get(), Mode::Enforce | Mode::Record) {
        // SAFETY: the executable's destructors, once (the process leaves with `_exit`).
        unsafe { __irs_run_fini_array() };
        kills(status);
    }
}

/// The kills outside EXPLORE: ENFORCE waits for what the verified trace's kills follow, RECORD
/// records them and writes the trace.
fn kills(status: c_int) {
    if mode::get() == Mode::Enforce {
        enforcer::end_waits();
    }
    if recorder::active() {
        recorder::record_kills();
        recorder::finish(Outcome::Exit(status), true);
    }
}

/// Leave now, after flushing stdio (the C library's remaining clean-up, which would run the
/// destructors again, is skipped).
fn leave(status: c_int) -> ! {
    // SAFETY: flushing every stdio stream, then ending the process.
    unsafe {
        libc::fflush(std::ptr::null_mut());
        libc::_exit(status)
    }
}

/// The runtime's exit hook, registered before the program's `main` runs, so it runs after
/// every handler the program registers: where the end completes.
extern "C" fn exit_hook(status: c_int, _arg: *mut c_void) {
    if scheduler::active() {
        // `exit` called from code the pass did not see: its end event now.
        scheduler::begin_end(None, status);
        // SAFETY: the executable's destructors, as events of this thread.
        unsafe { __irs_run_fini_array() };
        scheduler::complete_end();
    }
    if matches!(mode::get(), Mode::Enforce | Mode::Record) {
        complete_end(status);
        leave(status);
    }
}

/// Register the exit hook (at start-up, before the program's own code runs).
pub fn install_hook() {
    // SAFETY: registering a handler with the C library.
    unsafe { on_exit(exit_hook, std::ptr::null_mut()) };
}

/// `main` returned `code`, outside EXPLORE (EXPLORE: `scheduler::main_returned`): its `End`.
/// The caller returns `code` to the C library, which runs the handlers and the hook.
pub fn main_returned() {
    end_event(None);
}

/// # Safety
/// Same contract as `exit`.
#[no_mangle]
pub unsafe extern "C" fn __irs_exit(code: c_int, site: u64) -> ! {
    match mode::get() {
        Mode::Explore => scheduler::begin_end(Some(SiteId(site)), code),
        Mode::Off | Mode::Chaos => {}
        Mode::Enforce | Mode::Record => end_event(Some(SiteId(site))),
    }
    // SAFETY: the C library's exit: the handlers, then the hook above.
    unsafe { libc::exit(code) }
}

/// `_exit` and `_Exit`: no handlers, no destructors.
///
/// # Safety
/// Same contract as `_exit`.
#[no_mangle]
pub unsafe extern "C" fn __irs__exit(code: c_int, site: u64) -> ! {
    match mode::get() {
        Mode::Explore => {
            scheduler::begin_end(Some(SiteId(site)), code);
            scheduler::complete_end()
        }
        Mode::Off | Mode::Chaos => {}
        Mode::Enforce | Mode::Record => {
            end_event(Some(SiteId(site)));
            kills(code);
        }
    }
    // SAFETY: ending the process at once, as `_exit` does.
    unsafe { libc::_exit(code) }
}

/// # Safety
/// Same contract as `quick_exit`.
#[no_mangle]
pub unsafe extern "C" fn __irs_quick_exit(code: c_int, site: u64) -> ! {
    match mode::get() {
        Mode::Explore => {
            scheduler::begin_end(Some(SiteId(site)), code);
            run_quick_handlers();
            scheduler::complete_end()
        }
        Mode::Off | Mode::Chaos => run_quick_handlers(),
        Mode::Enforce | Mode::Record => {
            end_event(Some(SiteId(site)));
            run_quick_handlers();
            kills(code);
        }
    }
    // SAFETY: `quick_exit` does not flush stdio either; ending the process at once.
    unsafe { libc::_exit(code) }
}

/// # Safety
/// Same contract as `at_quick_exit`.
#[no_mangle]
pub unsafe extern "C" fn __irs_at_quick_exit(f: Option<extern "C" fn()>, _site: u64) -> c_int {
    let n = QUICK_COUNT.load(Ordering::Relaxed);
    if n >= MAX_QUICK || f.is_none() {
        return -1;
    }
    // SAFETY: see `QuickHandlers`.
    unsafe { (*QUICK.0.get())[n] = f };
    QUICK_COUNT.store(n + 1, Ordering::Relaxed);
    0
}

/// # Safety
/// Same contract as glibc's `on_exit`.
#[no_mangle]
pub unsafe extern "C" fn __irs_on_exit(f: Option<extern "C" fn(c_int, *mut c_void)>, arg: *mut c_void, _site: u64) -> c_int {
    let Some(f) = f else { return -1 };
    crate::program::exit_handlers::registered();
    // SAFETY: forwarded to the C library.
    unsafe { on_exit(f, arg) }
}

/// # Safety
/// Same contract as `atexit`.
#[no_mangle]
pub unsafe extern "C" fn __irs_atexit(f: Option<extern "C" fn()>, _site: u64) -> c_int {
    extern "C" {
        fn atexit(f: extern "C" fn()) -> c_int;
    }
    let Some(f) = f else { return -1 };
    crate::program::exit_handlers::registered();
    // SAFETY: forwarded to the C library.
    unsafe { atexit(f) }
}
