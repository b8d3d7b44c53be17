//! An execution's life under the scheduler (DESIGN §7): set up with `main` as `T0` on a fiber
//! of its own ([`init`]); run from the code that serves executions, its *host* ([`run`]);
//! paused at a snapshot, its host then running on a stack of its own beside the execution's
//! fibers, and continued from there ([`pause_to_host`], [`resume`], and what a paused image
//! needs: [`live_stacks`], the buffer's [`Mark`]); and ended ([`finish`]): the outcome written,
//! then the process left, or the host resumed (the persistent worker).
//!
//! It must never choose a thread or record an event: that is `decision`'s. Where and when to
//! pause is the fork server's ([`on_pause`]) and the decision's; this file only switches.

use super::{active, monotonic_micros, with, Continuation, LogicalThread, Scheduler, SCHED};
use crate::explore::fiber::{self, Fiber, FiberFn};
use crate::explore::fiber_tls::StaticTls;
use crate::explore::stack_pool;
use crate::thread::spin_watch::Writes;
use shared_proto::explore_buffer::{BufferWriter, ChildOutcome, Mark};
use std::cell::UnsafeCell;
use std::collections::BTreeMap;
use std::ffi::{c_int, c_void};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

/// Where an execution pauses at its snapshot step: the fork server's, which owns the pipes and
/// the levels of paused executions (set by it before the first execution; the scheduler only
/// knows when to pause).
pub(super) static PAUSE: std::sync::OnceLock<fn() -> Continuation> = std::sync::OnceLock::new();

/// The fork server says where executions pause.
pub fn on_pause(pause: fn() -> Continuation) {
    let _ = PAUSE.set(pause);
}

/// The code that runs executions (a serving loop), suspended while an execution runs: level 0
/// is the persistent worker's, level `l` the one of the execution paused at the `l`-th nested
/// snapshot, which runs on a host stack of its own beside the execution's fibers.
struct Hosts(UnsafeCell<[Fiber; stack_pool::MAX_LEVELS + 1]>);

// SAFETY: used only on the one OS thread of EXPLORE, by `run`, `pause_to_host`, `resume` and
// `finish`.
unsafe impl Sync for Hosts {}

static HOSTS: Hosts = Hosts(UnsafeCell::new([const { Fiber::current() }; stack_pool::MAX_LEVELS + 1]));

fn host(level: usize) -> *mut Fiber {
    // SAFETY: an element of the static table (one OS thread; see `Hosts`).
    unsafe { (*HOSTS.0.get()).as_mut_ptr().add(level) }
}

/// The host an ending execution returns to. Relaxed: one OS thread reads and writes it.
static HOST_LEVEL: AtomicUsize = AtomicUsize::new(0);

/// Whether an ending execution returns to its host (a persistent worker) instead of leaving
/// the process. Relaxed: one OS thread reads and writes it.
static RETURN_TO_HOST: AtomicBool = AtomicBool::new(false);

/// What a paused execution continues with, set by its host before resuming it.
struct Resume(UnsafeCell<Option<Continuation>>);

// SAFETY: one OS thread (see `Hosts`).
unsafe impl Sync for Resume {}

static RESUME: Resume = Resume(UnsafeCell::new(None));

/// Set up the execution: `main` (run by `entry`, which must end in
/// [`main_returned`](super::main_returned)) becomes
/// `T0`, on its own fiber.
pub fn init(buffer: BufferWriter<'static>, c: Continuation, tls: Option<StaticTls>, entry: FiberFn) -> Result<(), &'static str> {
    let stack = stack_pool::stack(0).ok_or("cannot map the stacks of logical threads")?;
    let mut s = Scheduler {
        threads: Vec::new(),
        current: 0,
        schedule_len: c.schedule_len,
        snapshot_at: c.snapshot_at,
        step: 0,
        hint: 0,
        owners: Vec::new(),
        recursion: Vec::new(),
        sems: Vec::new(),
        barriers: Vec::new(),
        rwlocks: Vec::new(),
        writes: Writes::default(),
        buffer,
        tls,
        booting_parent: None,
        policy: c.policy,
        heap: BTreeMap::new(),
        freed: BTreeMap::new(),
        quarantine: Default::default(),
        quarantined: 0,
        keys: Vec::new(),
        clock_base: monotonic_micros(),
        paused_at: 0,
        ending: None,
        thread_bound: None,
        choice: 0,
        discarding: false,
    };
    s.buffer.thread(0, None, 0);
    // `T0` starts with the live TLS block as it is (the OS thread's), like a program's `main`.
    let main_tls = tls.map(|t| vec![0u8; t.size()].into_boxed_slice()).unwrap_or_default();
    let range = (stack.bottom() as u64, stack.top() as u64);
    s.threads.push(LogicalThread::new(Fiber::new(stack, entry, std::ptr::null_mut()), range, main_tls, None));
    // SAFETY: set once per execution, before any fiber of it runs.
    unsafe { *SCHED.0.get() = Some(s) };
    Ok(())
}

/// Run the execution set up by [`init`]. With `return_to_host`, returns when it has ended;
/// otherwise the execution ends the process.
pub fn run(return_to_host: bool) {
    RETURN_TO_HOST.store(return_to_host, Ordering::Relaxed);
    HOST_LEVEL.store(0, Ordering::Relaxed);
    let t0 = with(|s| &s.threads[0].fiber as *const Fiber);
    // SAFETY: the host is the running code; `T0` is a new fiber on its own stack, which the
    // scheduler keeps in place until the execution ends (see `switch_to`).
    unsafe { fiber::switch(&mut *host(0), &*t0) };
}

/// Suspend the running thread, paused at a snapshot, and run `entry(level)` as the host of
/// `level` on its own stack. Returns when the host resumes this execution (see [`resume`]),
/// with what it should continue with.
pub fn pause_to_host(level: usize, entry: FiberFn) -> Continuation {
    let stack = stack_pool::host_stack(level).unwrap_or_else(|| finish(ChildOutcome::Unsupported("snapshots nested too deep")));
    let me = with(|s| &mut s.threads[s.current].fiber as *mut Fiber);
    // SAFETY: the host fiber of `level` is not running (levels are entered once per process,
    // deeper ones only from this one); it starts fresh on its own stack.
    unsafe {
        *host(level) = Fiber::new(stack, entry, level as *mut c_void);
        fiber::switch(&mut *me, &*host(level));
    }
    // SAFETY: set by the host just before it resumed us (one OS thread).
    unsafe { (*RESUME.0.get()).take().expect("a paused execution is resumed with a continuation") }
}

/// In the host of `level`: continue the paused execution with `c`. With `return_to_host`,
/// returns when it has ended (or paused again, at a deeper level); otherwise it ends the process.
pub fn resume(level: usize, c: Continuation, return_to_host: bool) {
    RETURN_TO_HOST.store(return_to_host, Ordering::Relaxed);
    HOST_LEVEL.store(level, Ordering::Relaxed);
    // SAFETY: one OS thread; read by the paused thread as soon as it runs.
    unsafe { *RESUME.0.get() = Some(c) };
    let paused = with(|s| &s.threads[s.current].fiber as *const Fiber);
    // SAFETY: the host of `level` is the running code; the paused thread is suspended in
    // `pause_to_host`, on its own stack, which the scheduler keeps in place.
    unsafe { fiber::switch(&mut *host(level), &*paused) };
}

/// The live parts of the stacks of the threads that can still run and of the running one,
/// `(start, length)` (from each suspended fiber's stack pointer to the top of its stack), into
/// `out`; how many. A
/// paused execution's image needs these and nothing else of the stack pool.
pub fn live_stacks(out: &mut [(usize, usize)]) -> usize {
    with(|s| {
        let mut n = 0;
        // The thread that paused may have finished already: it pauses on its way out, in the
        // decision that hands over to the next thread.
        for (_, th) in s.threads.iter().enumerate().filter(|&(i, t)| !t.finished || i == s.current) {
            let sp = th.fiber.sp() as usize;
            let top = th.stack.1 as usize;
            if sp != 0 && sp < top && n < out.len() {
                out[n] = (sp, top - sp);
                n += 1;
            }
        }
        n
    })
}

/// The buffer's counts now (taken when pausing at a snapshot).
pub fn buffer_mark() -> Mark {
    with(|s| s.buffer.mark())
}

/// A continuation of a snapshot starts with the buffer as it was at the pause.
pub fn restart_from(mark: Mark) {
    with(|s| s.buffer.reset_to(mark));
}

/// End the execution: write the outcome, flush the program's stdio, then leave the process or
/// return to the host (see [`run`]).
pub fn finish(outcome: ChildOutcome) -> ! {
    let me = with(|s| {
        // An end by a failed assumption: an execution the program rules out.
        let outcome = match outcome {
            ChildOutcome::Exit(_) if s.discarding => ChildOutcome::Discarded,
            o => o,
        };
        s.buffer.outcome(outcome);
        &mut s.threads[s.current].fiber as *mut Fiber
    });
    // SAFETY: flushing all stdio streams.
    unsafe { libc::fflush(std::ptr::null_mut()) };
    if RETURN_TO_HOST.load(Ordering::Relaxed) {
        // SAFETY: the running fiber is the current logical thread's; the host is suspended in
        // `run` or `resume`. This fiber is never resumed: the host discards the execution.
        unsafe { fiber::switch(&mut *me, &*host(HOST_LEVEL.load(Ordering::Relaxed))) };
        unreachable!("an ended execution is never resumed");
    }
    // SAFETY: leaving without running atexit handlers again.
    unsafe { libc::_exit(0) }
}

/// For the crash handler: record the signal if the buffer can be written.
pub fn record_signal(sig: c_int) {
    if active() {
        with(|s| s.buffer.outcome(ChildOutcome::Signal(sig)));
    }
}
