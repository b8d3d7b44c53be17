//! The controlled scheduler of EXPLORE (DESIGN §7). Every logical thread of the
//! program is a [`Fiber`] on the one OS thread of an execution, so exactly one runs between
//! visible events by construction.
//!
//! At each visible operation the running thread publishes it as its pending operation and makes
//! the scheduling decision: the next thread of the requested schedule, or by the default policy
//! (keep running the current thread while it is enabled, else the lowest enabled id: fewest
//! preemptions, deterministic). Switching to a thread *is* granting its pending operation: it
//! resumes inside its own call of [`grant`], returns, and performs it. A new thread runs at once
//! up to its first visible operation (what it does before is invisible to others), so every
//! live thread always has a known pending operation. A mutex lock is enabled when the mutex is
//! free, a join when the joined thread has finished; with no enabled thread left while some
//! have not finished, the execution ends in a deadlock.
//!
//! Everything the decision records goes to the [`BufferWriter`] in shared memory as it happens.
//! An execution ends by writing its outcome; then, in a process forked for it, by leaving the
//! process (`_exit`: the fork server reports the rest), and in the persistent worker by
//! switching back to the worker's own code (the *host* fiber), which restores the process for
//! the next execution. `main` runs as logical thread `T0` on a fiber of its own in both cases.

use crate::explore::fiber::{self, Fiber, FiberFn};
use crate::explore::fiber_tls::{self, StaticTls};
use crate::sync::mutex_kind;
use crate::thread::spin_watch::{Iteration, ThreadSpin, Writes};
use crate::explore::stack_pool;
use crate::thread::thread_flag;
use shared_proto::explore_protocol::{Policy, RequestView, MAX_SCHEDULE};
use shared_proto::explore_buffer::{BufferWriter, ChildOutcome, Mark, OpRecord, BLOCKED_STEP, MAX_THREADS};
use shared_proto::{sync_object, AccessKind, EventKind, LogicalAddr, Region, SiteId, ThreadId, ViolationKind};
use std::cell::UnsafeCell;
use std::collections::BTreeMap;
use std::ffi::{c_int, c_void};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

pub type StartRoutine = extern "C" fn(*mut c_void) -> *mut c_void;

/// What an execution does from where it starts (`main` or a pause). Its schedule is in
/// [`SCHEDULE`]: not on the heap, whose layout every execution of a schedule must
/// share (from `main` or from a snapshot alike).
pub struct Continuation {
    pub schedule_len: usize,
    pub policy: Policy,
    /// Pause at the decision of this step (a nested snapshot).
    pub snapshot_at: Option<u32>,
}

/// `CLOCK_MONOTONIC` in µs.
pub(crate) fn monotonic_micros() -> u64 {
    shared_proto::explore_protocol::clock_micros(libc::CLOCK_MONOTONIC)
}

/// Where an execution pauses at its snapshot step: the fork server's, which owns the pipes and
/// the levels of paused executions (set by it before the first execution; the scheduler only
/// knows when to pause).
static PAUSE: std::sync::OnceLock<fn() -> Continuation> = std::sync::OnceLock::new();

/// The fork server says where executions pause.
pub fn on_pause(pause: fn() -> Continuation) {
    let _ = PAUSE.set(pause);
}

/// Synthetic `pthread_t` values of logical threads in EXPLORE.
const HANDLE_BASE: u64 = 0x1_0000_0000;

pub fn handle_of(tid: u32) -> u64 {
    HANDLE_BASE + tid as u64
}

fn tid_of(handle: u64) -> Option<u32> {
    handle.checked_sub(HANDLE_BASE).filter(|t| *t < MAX_THREADS as u64).map(|t| t as u32)
}

struct LogicalThread {
    fiber: Fiber,
    /// `[bottom, top)` of its stack, for logical addresses.
    stack: (u64, u64),
    /// Heap blocks it allocated so far.
    allocs: u32,
    tls: Box<[u8]>,
    errno: c_int,
    finished: bool,
    /// Stopped at a violation: finished for the scheduler, but never joinable.
    halted: bool,
    /// The operation it waits to perform, or performs now (`None` while it runs invisible code).
    pending: Option<OpRecord>,
    /// Accesses opened while `pending` is being performed (the store of a memcpy whose load is
    /// `pending`): part of the same operation, so no new scheduling decision.
    nested: Vec<OpRecord>,
    next_k: u32,
    children: u32,
    /// Its name by creation path (`sync_object::child_name`), the same in every execution.
    name: u64,
    /// Its children, in creation order (the order the process's end kills threads in).
    kids: Vec<usize>,
    /// Threads whose exit is in this thread's history through joins and creations (a bit per
    /// thread): the end does not kill them, they are over (see [`end_kill_next`]).
    known_done: u64,
    /// Cut off by the process's end: finished for the scheduler, never joinable.
    killed: bool,
    /// Inside an atomic block (nesting depth): its accesses are part of the block's step.
    atomic_depth: u32,
    /// Accesses of the block opened and not yet closed (their `after` callbacks).
    atomic_open: u32,
    /// Where it is in the loops the runtime watches for spinning (`spin_watch`).
    spin: ThreadSpin,
    /// Halted at an iteration of a watched loop that only read (`loop_head`): it waits there for
    /// good, in this execution.
    spin_halted: bool,
    /// The step count when it last reached a watched loop's header (`Policy::Anchor`: its steps
    /// from there on are the iteration's).
    iteration_step: u32,
    /// It slept (`sleep`, `usleep`, ...; which costs no time here) and has not run an operation
    /// since: the default policy lets every other thread that can move go first, as the OS does
    /// while a thread sleeps (see `decide`).
    slept: bool,
    /// Its virtual time in ns (`abi::clock`): what its sleeps and clock reads have advanced it
    /// by, from its creator's at its creation; a join takes the joined thread's if later.
    clock_ns: u64,

    start: Option<(StartRoutine, *mut c_void)>,
    retval: *mut c_void,
    /// Thread-specific data (`pthread_setspecific`), by key.
    specific: Vec<(u32, *mut c_void)>,
}

impl LogicalThread {
    fn new(fiber: Fiber, stack: (u64, u64), tls: Box<[u8]>, start: Option<(StartRoutine, *mut c_void)>) -> LogicalThread {
        LogicalThread {
            fiber,
            stack,
            allocs: 0,
            tls,
            errno: 0,
            finished: false,
            halted: false,
            pending: None,
            nested: Vec::new(),
            next_k: 0,
            children: 0,
            name: 0,
            kids: Vec::new(),
            known_done: 0,
            killed: false,
            atomic_depth: 0,
            atomic_open: 0,
            spin: ThreadSpin::default(),
            slept: false,
            clock_ns: 0,
            spin_halted: false,
            iteration_step: 0,
            start,
            retval: std::ptr::null_mut(),
            specific: Vec::new(),
        }
    }
}

struct Scheduler {
    threads: Vec<LogicalThread>,
    current: usize,
    /// The first `schedule_len` entries of [`SCHEDULE`] are the requested thread ids.
    schedule_len: usize,
    /// Pause at the decision of this step and serve continuations (a snapshot).
    snapshot_at: Option<u32>,
    step: u32,
    /// Held mutexes and their owners (a handful at a time: a list beats a hash table here).
    owners: Vec<(u64, u32)>,
    /// Recursive mutexes locked more than once: the locks beyond the first (no events).
    recursion: Vec<(u64, u32)>,
    /// The execution's writes, for telling spinning threads (`spin_watch`).
    writes: Writes,
    buffer: BufferWriter<'static>,
    tls: Option<StaticTls>,
    /// Set while a new thread runs to its first visible operation: its creator.
    booting_parent: Option<usize>,
    /// How to choose after the schedule (for `Random`, the splitmix64 state).
    policy: Policy,
    /// Live heap blocks by start address: (size, allocating thread, its allocation count).
    heap: BTreeMap<u64, (u64, u32, u32)>,
    /// Thread-specific data keys created so far (`true` while not deleted), and destructors.
    keys: Vec<(bool, Option<extern "C" fn(*mut c_void)>)>,
    /// The execution's clock: `now - clock_base` is its running time since `main` (µs), moved
    /// forward when a continuation resumes it so that the pause does not count.
    clock_base: u64,
    /// Its running time when it paused at a snapshot. (The clock is read through the vDSO: tens
    /// of ns, once per decision.)
    paused_at: u64,
    /// The enabled threads' pending operations at the decision being made (kept, not rebuilt:
    /// an array of `MAX_THREADS` records filled at every decision was 13% of the program's time
    /// in EXPLORE on DISP(5,4)).
    ops: Vec<OpRecord>,
    /// The process's end, once a thread has performed it: that thread and the exit status.
    /// From then on no other end is enabled, and the ender kills the other threads one by one.
    ending: Option<(usize, c_int)>,
    /// The value the last decision chose for the chosen thread's `__VERIFIER_nondet_*` call (an
    /// index into the explored domain; see `ThreadId::CHOICE_SHIFT`).
    choice: u32,
    /// The end is a failed `__VERIFIER_assume`: the execution is discarded.
    discarding: bool,
}

fn splitmix64(state: &mut u64) -> u64 {
    *state = state.wrapping_add(0x9e37_79b9_7f4a_7c15);
    let mut z = *state;
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

struct Global(UnsafeCell<Option<Scheduler>>);

// SAFETY: EXPLORE runs every logical thread as a fiber of one OS thread; the scheduler is only
// touched from that thread, and no reference to it is held across a fiber switch (see `with`).
unsafe impl Sync for Global {}

static SCHED: Global = Global(UnsafeCell::new(None));

/// Run `f` on the scheduler. `f` must not switch fibers (so no borrow outlives a switch).
fn with<R>(f: impl FnOnce(&mut Scheduler) -> R) -> R {
    // SAFETY: one OS thread (see `Global`); callers never switch inside `f`, so this is the
    // only live reference.
    let s = unsafe { &mut *SCHED.0.get() };
    f(s.as_mut().expect("EXPLORE scheduler used before it was set up"))
}

pub fn active() -> bool {
    // SAFETY: a read of the option's discriminant on the one OS thread.
    unsafe { (*SCHED.0.get()).is_some() }
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

/// Set up the execution: `main` (run by `entry`, which must end in [`main_returned`]) becomes
/// `T0`, on its own fiber.
pub fn init(buffer: BufferWriter<'static>, c: Continuation, tls: Option<StaticTls>, entry: FiberFn) -> Result<(), &'static str> {
    let stack = stack_pool::stack(0).ok_or("cannot map the stacks of logical threads")?;
    let mut s = Scheduler {
        threads: Vec::new(),
        current: 0,
        schedule_len: c.schedule_len,
        snapshot_at: c.snapshot_at,
        step: 0,
        owners: Vec::new(),
        recursion: Vec::new(),
        writes: Writes::default(),
        buffer,
        tls,
        booting_parent: None,
        policy: c.policy,
        heap: BTreeMap::new(),
        keys: Vec::new(),
        clock_base: monotonic_micros(),
        paused_at: 0,
        ops: Vec::with_capacity(MAX_THREADS),
        ending: None,
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

/// The requested schedule. Static, not on the heap: see [`Continuation`].
static mut SCHEDULE: [u32; MAX_SCHEDULE] = [0; MAX_SCHEDULE];

/// Copy a request's schedule into [`SCHEDULE`] (in a freshly forked child).
pub fn load_schedule(req: &RequestView) {
    // SAFETY: one thread; nothing reads the schedule while it is being replaced.
    let sched = unsafe { &mut *std::ptr::addr_of_mut!(SCHEDULE) };
    for (i, slot) in sched.iter_mut().enumerate().take(req.schedule_len()) {
        *slot = req.schedule_at(i);
    }
}

/// Where [`SCHEDULE`] is, `(start, length)`: rewritten before each execution, so a persistent
/// worker need not restore it.
pub fn schedule_region() -> (usize, usize) {
    (std::ptr::addr_of!(SCHEDULE) as usize, std::mem::size_of::<[u32; MAX_SCHEDULE]>())
}

fn schedule_at(i: usize) -> u32 {
    // SAFETY: one thread; `i` is below the loaded length (checked by the caller).
    unsafe { (*std::ptr::addr_of!(SCHEDULE))[i] }
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

impl Scheduler {
    fn owner(&self, m: u64) -> Option<u32> {
        self.owners.iter().find(|&&(x, _)| x == m).map(|&(_, t)| t)
    }

    fn enabled(&self, t: usize) -> bool {
        let th = &self.threads[t];
        let Some(op) = th.pending.filter(|_| !th.finished) else { return false };
        match op.kind {
            EventKind::Lock => self.owner(op.addr).is_none(),
            EventKind::Join => self.threads.get(op.addr as usize).is_some_and(|j| j.finished && !j.halted && !j.killed),
            // One end per process: a thread that calls `exit` after another waits for good.
            EventKind::End => self.ending.is_none(),
            _ => true,
        }
    }

    /// The execution's running time so far, µs (saturating at `u32::MAX`: 71 minutes).
    fn elapsed(&self) -> u32 {
        monotonic_micros().saturating_sub(self.clock_base).min(u32::MAX as u64) as u32
    }

    fn describe_wait(&self, t: usize) -> Option<String> {
        let th = &self.threads[t];
        if th.spin_halted {
            let (at, _) = crate::program::program_info::site_text(SiteId(th.spin.loop_site().unwrap_or(0)));
            return Some(format!("T{t} spins at {at} (a loop whose iterations only read, and nothing it reads can change any more)"));
        }
        let op = th.pending?;
        Some(match op.kind {
            // A gate of a condition variable, semaphore, barrier or rwlock: waiting for what
            // would wake it (see `shared_proto::sync_object`).
            EventKind::Lock if sync_object::decode(op.addr).is_some_and(|(_, tag)| tag >= 0x100) => {
                format!("T{t} waits on {}", sync_object::describe(op.addr).unwrap_or_default())
            }
            EventKind::Lock => {
                let what = sync_object::describe(op.addr).unwrap_or_else(|| format!("mutex {:#x}", op.addr));
                match self.owner(op.addr) {
                    Some(owner) => format!("T{t} waits for {what} held by T{owner}"),
                    None => format!("T{t} waits for {what}"),
                }
            }
            EventKind::Join if self.threads.get(op.addr as usize).is_some_and(|j| j.spin_halted) => {
                format!("T{t} waits to join T{}, which spins", op.addr)
            }
            EventKind::Join if self.threads.get(op.addr as usize).is_some_and(|j| j.halted) => {
                format!("T{t} waits to join T{}, which stopped at a violation", op.addr)
            }
            EventKind::Join if self.threads.get(op.addr as usize).is_some_and(|j| j.killed) => {
                format!("T{t} waits to join T{}, which the process's end cut off", op.addr)
            }
            EventKind::Join => format!("T{t} waits to join T{}", op.addr),
            EventKind::End => format!("T{t} waits to end the process, which another thread is ending"),
            _ => format!("T{t} waits for {}", op.kind.name()),
        })
    }
}

/// Decide which thread performs the next operation and switch to it. Returns when the calling
/// thread (`me`) has been granted its pending operation; never returns if `me` has finished.
fn decide(me: usize) {
    if with(|s| s.snapshot_at == Some(s.step)) {
        with(|s| s.paused_at = monotonic_micros().saturating_sub(s.clock_base));
        // Returns in a continuation, with what it should do from here.
        let c = PAUSE.get().expect("the fork server says where to pause before any execution")();
        with(|s| {
            s.clock_base = monotonic_micros().saturating_sub(s.paused_at);
            s.schedule_len = c.schedule_len;
            s.policy = c.policy;
            s.snapshot_at = c.snapshot_at;
        });
        return decide(me);
    }
    let next = with(|s| {
        // On the stack, not the heap: a decision is made at every visible operation.
        let mut enabled_buf = [0usize; MAX_THREADS];
        let mut n = 0;
        for t in 0..s.threads.len() {
            if s.enabled(t) {
                enabled_buf[n] = t;
                n += 1;
            }
        }
        let enabled = &enabled_buf[..n];
        if let (true, Some((ender, code))) = (enabled.is_empty(), s.ending) {
            if !s.threads[ender].finished {
                // The ender itself waits (an exit handler locks a mutex a blocked thread holds):
                // the process hangs at its end, a deadlock like any other.
                let blocked: Vec<OpRecord> = s.threads.iter().filter(|t| !t.finished).filter_map(|t| t.pending).collect();
                s.buffer.step(BLOCKED_STEP, &blocked, s.elapsed());
                let waits: Vec<String> = (0..s.threads.len()).filter(|&t| !s.threads[t].finished).filter_map(|t| s.describe_wait(t)).collect();
                return Err(waits.join("; "));
            }
            // The ender stopped (a violation in an exit handler) and nothing else can move: the
            // process ends as it would have. What the others wait for is recorded all the same.
            let blocked: Vec<OpRecord> = s.threads.iter().filter(|t| !t.finished).filter_map(|t| t.pending).collect();
            s.buffer.step(BLOCKED_STEP, &blocked, s.elapsed());
            return Ok(Ok(Err(code)));
        }
        if enabled.is_empty() {
            // For the verifier: what the blocked threads wait to do (a pseudo step).
            let blocked: Vec<OpRecord> = s.threads.iter().filter(|t| !t.finished).filter_map(|t| t.pending).collect();
            s.buffer.step(BLOCKED_STEP, &blocked, s.elapsed());
            match spin_verdict(s) {
                Some(SpinEnd::Hangs(waits)) => return Err(waits),
                Some(SpinEnd::Discarded) => {
                    s.discarding = true;
                    return Ok(Ok(Err(0)));
                }
                None => {}
            }
            let waits: Vec<String> =
                (0..s.threads.len()).filter(|&t| !s.threads[t].finished).filter_map(|t| s.describe_wait(t)).collect();
            return Err(waits.join("; "));
        }
        let requested = ((s.step as usize) < s.schedule_len).then(|| schedule_at(s.step as usize));
        s.choice = 0;
        let chosen = match requested {
            Some(req) => {
                let (tid, choice) = (ThreadId(req).thread().0, ThreadId(req).choice());
                let mask = enabled.iter().fold(0u64, |m, &t| m | 1 << t);
                if !enabled.contains(&(tid as usize)) {
                    return Ok(Err((s.step, req, mask)));
                }
                if choice > 0 {
                    // A value only for a nondet call, and one of its domain.
                    let op = s.threads[tid as usize].pending.expect("enabled threads have one");
                    if op.kind != EventKind::Nondet || choice >= op.size {
                        return Ok(Err((s.step, req, mask)));
                    }
                    s.choice = choice;
                }
                tid as usize
            }
            None => match &mut s.policy {
                Policy::Random(state) => enabled[(splitmix64(state) % enabled.len() as u64) as usize],
                // `Default`: a thread inside a watched loop runs last, and of several the one
                // that has waited longest (`spin_watch`). `RoundRobin`: the next thread by id.
                // Their iterating versions (`Anchor`, `AnchorRoundRobin`): loops iterate (see
                // `loop_head`), and a thread that would only repeat its last iteration with
                // nothing it read written since does not run at all; when none other can, the
                // run would spin for ever.
                policy => {
                    let policy = *policy;
                    let mut buf;
                    let can = if policy.iterates() {
                        buf = [0usize; MAX_THREADS];
                        let mut n = 0;
                        for &t in enabled.iter().filter(|&&t| !s.threads[t].spin.spinning(&s.writes)) {
                            buf[n] = t;
                            n += 1;
                        }
                        &buf[..n]
                    } else {
                        enabled
                    };
                    // A thread that slept comes after every thread that has not (and of those
                    // that slept, after the last runner, in turn, as a serialised run does): the
                    // first execution, on which published prefixes are anchored, then follows
                    // the order the program's sleeps ask for (a pool's jobs start before `main`,
                    // which slept, counts them), so that a production run under a prefix keeps
                    // its timing.
                    let waits = |t: usize| s.threads[t].spin.waiting_since();
                    let awake = |t: usize| waits(t).is_none() && !s.threads[t].slept;
                    if can.is_empty() {
                        s.discarding = true;
                        return Ok(Ok(Err(0)));
                    } else if matches!(policy, Policy::RoundRobin | Policy::AnchorRoundRobin) {
                        can.iter().copied().find(|&t| t > me).unwrap_or(can[0])
                    } else if can.contains(&me) && awake(me) {
                        me
                    } else if let Some(t) = can.iter().copied().find(|&t| awake(t)) {
                        t
                    } else if let Some(t) = can.iter().copied().filter(|&t| waits(t).is_none()).min_by_key(|&t| (t <= me, t)) {
                        t
                    } else {
                        *can.iter().min_by_key(|&&t| (waits(t), t)).expect("not empty")
                    }
                }
            },
        };
        if let (None, Policy::Random(state)) = (requested, &mut s.policy) {
            let op = s.threads[chosen].pending.expect("enabled threads have one");
            if op.kind == EventKind::Nondet && op.size > 1 {
                s.choice = (splitmix64(state) % op.size as u64) as u32;
            }
        }
        s.threads[chosen].slept = false;
        let micros = s.elapsed();
        s.ops.clear();
        s.ops.extend(enabled.iter().map(|&t| s.threads[t].pending.expect("enabled threads have one")));
        // A kill records what the thread it cuts off was about to do.
        let op = s.threads[chosen].pending.expect("enabled threads have one");
        let cut = (op.kind == EventKind::Kill).then(|| s.threads.get(op.addr as usize).filter(|v| !v.finished).and_then(|v| v.pending)).flatten();
        if !s.buffer.step_with(chosen as u32, &s.ops, micros, cut.as_ref(), s.choice) {
            return Ok(Ok(Ok(None)));
        }
        s.step += 1;
        Ok(Ok(Ok(Some(chosen))))
    });
    match next {
        Err(waits) => finish(ChildOutcome::Deadlock(&waits)),
        Ok(Err((step, requested, enabled_mask))) => finish(ChildOutcome::Infeasible { step, requested, enabled_mask }),
        Ok(Ok(Err(code))) => finish(ChildOutcome::Exit(code)),
        Ok(Ok(Ok(None))) => finish(ChildOutcome::EventLimit),
        Ok(Ok(Ok(Some(chosen)))) if chosen == me => {}
        Ok(Ok(Ok(Some(chosen)))) => switch_to(chosen),
    }
}

/// Suspend the running thread and resume `to` (with its TLS and errno).
fn switch_to(to: usize) {
    let (from_fiber, to_fiber) = with(|s| {
        let from = s.current;
        if let Some(tls) = s.tls {
            // SAFETY: the live block is this OS thread's; the buffers have its size.
            unsafe {
                tls.save(&mut s.threads[from].tls);
                tls.restore(&s.threads[to].tls);
            }
        }
        s.threads[from].errno = fiber_tls::errno();
        fiber_tls::set_errno(s.threads[to].errno);
        s.current = to;
        (&mut s.threads[from].fiber as *mut Fiber, &s.threads[to].fiber as *const Fiber)
    });
    // SAFETY: `from` is the running fiber and `to` a suspended one; both live in the scheduler,
    // which never drops or moves a thread's fiber (the vector only grows, and fibers are moved
    // out of it never; growth moves the `Fiber` values, which is why they are re-read below).
    unsafe { fiber::switch(&mut *from_fiber, &*to_fiber) };
}

/// Wait until the calling thread may perform `op`.
pub fn grant(kind: EventKind, site: Option<SiteId>, addr: u64, size: u32) {
    grant_op(kind, site, addr, size, None)
}

fn grant_op(kind: EventKind, site: Option<SiteId>, addr: u64, size: u32, logical: Option<LogicalAddr>) {
    /// What the calling thread does next.
    enum Next {
        /// Wait for the operation's turn (and, for a new thread, hand back to its creator).
        Decide(usize, Option<usize>),
        /// Nothing: part of an operation under way, or of an atomic block.
        Go,
        Full,
        Unsupported(EventKind),
    }
    let next = with(|s| {
        let me = s.current;
        let op = OpRecord { tid: me as u32, kind, site, addr, size, logical };
        let th = &mut s.threads[me];
        if th.atomic_depth > 0 {
            let EventKind::Access(_) = kind else { return Next::Unsupported(kind) };
            // Part of the atomic block's step: recorded now, no decision.
            let k = th.next_k;
            th.next_k += 1;
            th.atomic_open += 1;
            th.spin.observe(EventKind::Atomic, site.map(|x| x.0), addr, size, &s.writes);
            if let EventKind::Access(k) = kind {
                if k.writes() {
                    s.writes.wrote(addr, size);
                }
            }
            return if s.buffer.event(&op, k) { Next::Go } else { Next::Full };
        }
        if th.pending.is_some() {
            // Opened while its operation is being performed: part of that operation.
            th.nested.push(op);
            return Next::Go;
        }
        th.pending = Some(op);
        Next::Decide(me, s.booting_parent.take())
    });
    match next {
        Next::Go => {}
        Next::Full => finish(ChildOutcome::EventLimit),
        Next::Unsupported(kind) => finish(ChildOutcome::Unsupported(&format!("an operation `{}` inside an atomic block (__VERIFIER_atomic_*)", kind.name()))),
        // A new thread reached its first operation: back to its creator; it runs when chosen.
        Next::Decide(_, Some(parent)) => switch_to(parent),
        Next::Decide(me, None) => decide(me),
    }
}

/// The calling thread performed its granted operation: record it as an event.
pub fn done() -> EventKind {
    let (recorded, kind) = with(|s| {
        let me = s.current;
        let th = &mut s.threads[me];
        if th.pending.is_none() && th.atomic_open > 0 {
            // An access of an atomic block, recorded when it opened.
            th.atomic_open -= 1;
            return (true, EventKind::Access(AccessKind::Load));
        }
        let op = th.pending.take().expect("done without grant");
        if !th.nested.is_empty() {
            th.pending = Some(th.nested.remove(0));
        }
        let k = s.threads[me].next_k;
        s.threads[me].next_k += 1;
        match op.kind {
            EventKind::Access(a) if a.writes() => s.writes.wrote(op.addr, op.size),
            // What a failed trylock read (`spin_watch`: it is a read of the mutex) changes.
            EventKind::Lock | EventKind::TryLock | EventKind::Unlock => s.writes.wrote(op.addr, 1),
            _ => {}
        }
        s.threads[me].spin.observe(op.kind, op.site.map(|x| x.0), op.addr, op.size, &s.writes);
        (s.buffer.event(&op, k), op.kind)
    });
    if !recorded {
        finish(ChildOutcome::EventLimit);
    }
    kind
}

pub fn current() -> u32 {
    with(|s| s.current as u32)
}

/// The running logical thread's name by creation path (`sync_object::child_name`).
pub fn current_name() -> u64 {
    with(|s| s.threads[s.current].name)
}

impl Scheduler {
    /// Name `addr` by heap block or stack when it lies in one (DESIGN §3); an internal object of
    /// a primitive (`shared_proto::sync_object`) after the primitive's own logical address.
    fn logical(&self, addr: u64) -> LogicalAddr {
        if let Some((base, tag)) = sync_object::decode(addr) {
            let l = self.logical(base);
            return LogicalAddr { region: l.region, offset: sync_object::sub(l.offset, tag) };
        }
        if let Some((&base, &(size, thread, alloc))) = self.heap.range(..=addr).next_back() {
            if addr < base + size.max(1) {
                return LogicalAddr { region: Region::Heap { thread: ThreadId(thread), alloc }, offset: addr - base };
            }
        }
        for (t, th) in self.threads.iter().enumerate() {
            let (bottom, top) = th.stack;
            if bottom <= addr && addr < top {
                return LogicalAddr { region: Region::Stack { thread: ThreadId(t as u32) }, offset: top - addr };
            }
        }
        LogicalAddr { region: Region::Static, offset: addr }
    }
}

// ---- per logical thread: pthread_self and thread-specific data ----------------------------

pub fn self_handle() -> u64 {
    handle_of(current())
}

pub fn key_create(key: *mut u32, destructor: Option<extern "C" fn(*mut c_void)>) -> c_int {
    with(|s| {
        s.keys.push((true, destructor));
        // SAFETY: the caller's pthread_key_t (an unsigned int) slot.
        unsafe { *key = (s.keys.len() - 1) as u32 };
    });
    0
}

pub fn key_delete(key: u32) -> c_int {
    with(|s| match s.keys.get_mut(key as usize) {
        Some(k) if k.0 => {
            k.0 = false;
            0
        }
        _ => libc::EINVAL,
    })
}

pub fn get_specific(key: u32) -> *mut c_void {
    with(|s| s.threads[s.current].specific.iter().find(|e| e.0 == key).map_or(std::ptr::null_mut(), |e| e.1))
}

pub fn set_specific(key: u32, value: *mut c_void) -> c_int {
    with(|s| {
        if !s.keys.get(key as usize).is_some_and(|k| k.0) {
            return libc::EINVAL;
        }
        let cur = s.current;
        let slot = &mut s.threads[cur].specific;
        match slot.iter_mut().find(|e| e.0 == key) {
            Some(e) => e.1 = value,
            None => slot.push((key, value)),
        }
        0
    })
}

/// Run the thread-specific data destructors of the ending thread (as pthread_exit does).
fn run_key_destructors() {
    for _ in 0..4 {
        let pending: Vec<(extern "C" fn(*mut c_void), *mut c_void)> = with(|s| {
            let cur = s.current;
            let mut out = Vec::new();
            for (key, (live, dtor)) in s.keys.iter().enumerate() {
                if let (true, Some(d)) = (live, dtor) {
                    let slot = s.threads[cur].specific.iter_mut().find(|e| e.0 == key as u32);
                    if let Some(e) = slot.filter(|e| !e.1.is_null()) {
                        out.push((*d, std::mem::replace(&mut e.1, std::ptr::null_mut())));
                    }
                }
            }
            out
        });
        if pending.is_empty() {
            return;
        }
        for (d, v) in pending {
            d(v);
        }
    }
}

/// A block the running thread allocated (not a visible operation: it only names memory).
pub fn allocated(p: *mut c_void, size: usize) {
    if p.is_null() {
        return;
    }
    with(|s| {
        let th = &mut s.threads[s.current];
        let alloc = th.allocs;
        th.allocs += 1;
        let thread = s.current as u32;
        s.heap.insert(p as u64, (size as u64, thread, alloc));
    });
}

pub fn freed(p: *mut c_void) {
    if !p.is_null() {
        // A mutex in the block (destroyed while locked, as glibc allows) is gone with it: a
        // later block at the same address holds other objects (named by their block, DESIGN §3).
        with(|s| {
            if let Some((size, _, _)) = s.heap.remove(&(p as u64)) {
                let range = p as u64..p as u64 + size.max(1);
                s.owners.retain(|(m, _)| !range.contains(m));
                s.recursion.retain(|(m, _)| !range.contains(m));
            }
        });
    }
}

/// `pthread_mutex_init` of a mutex that is held (destroyed while locked, which glibc allows:
/// its destroy fails with `EBUSY` and changes nothing; the init makes it a fresh, unlocked
/// mutex). Held by the initialising thread: an unlock event, so that the mutex's chain says it
/// is free, as it is. Held by another thread (undefined, racing with that thread): freed with
/// no event, as glibc's init does. Of a free mutex: nothing (no event).
pub fn mutex_reinit(m: u64, site: u64) {
    match with(|s| s.owner(m).map(|o| o == s.current as u32)) {
        None => return,
        Some(false) => {
            with(|s| {
                s.owners.retain(|&(x, _)| x != m);
                s.recursion.retain(|&(x, _)| x != m);
            });
            return;
        }
        Some(true) => {}
    }
    mutex_op(EventKind::Unlock, m, site);
    with(|s| {
        s.owners.retain(|&(x, _)| x != m);
        s.recursion.retain(|&(x, _)| x != m);
    });
    done();
}

// ---- operations ---------------------------------------------------------------------------

pub fn access_before(site: u64, addr: u64, kind: AccessKind, size: u32) {
    let logical = with(|s| s.logical(addr));
    grant_op(EventKind::Access(kind), Some(SiteId(site)), addr, size, Some(logical));
}

pub fn access_after() {
    done();
}

/// Wait to perform a mutex operation; the mutex is named by its logical address as well.
fn mutex_op(kind: EventKind, m: u64, site: u64) {
    let logical = with(|s| s.logical(m));
    grant_op(kind, Some(SiteId(site)), m, 0, Some(logical));
}

/// Lock a mutex of type `kind` (see `mutex_kind`). A recursive mutex the caller holds is
/// locked again without an event (nobody else can see it); an error-checking one fails with
/// `EDEADLK`; a normal one waits for good (a deadlock, as in the C library).
pub fn lock_kind(m: u64, site: u64, kind: i32) -> c_int {
    match (kind, with(|s| s.owner(m) == Some(s.current as u32))) {
        (mutex_kind::RECURSIVE, true) => {
            with(|s| match s.recursion.iter_mut().find(|(x, _)| *x == m) {
                Some((_, n)) => *n += 1,
                None => s.recursion.push((m, 1)),
            });
            return 0;
        }
        (mutex_kind::ERRORCHECK, true) => return libc::EDEADLK,
        _ => {}
    }
    mutex_op(EventKind::Lock, m, site);
    with(|s| s.owners.push((m, s.current as u32)));
    done();
    0
}

pub fn lock(m: u64, site: u64) -> c_int {
    lock_kind(m, site, mutex_kind::kind(m))
}

/// Unlock a mutex of type `kind`. A recursive one locked more than once only counts down; a
/// recursive or error-checking one the caller does not hold fails with `EPERM`; a normal one is
/// a violation (undefined behaviour), except an internal object, whose gates are released by
/// the thread that wakes their waiter.
pub fn unlock_kind(m: u64, site: u64, kind: i32) -> c_int {
    let owned = with(|s| s.owner(m) == Some(s.current as u32));
    if kind != 0 && !owned {
        return libc::EPERM;
    }
    if kind == mutex_kind::RECURSIVE {
        let inner = with(|s| match s.recursion.iter().position(|(x, _)| *x == m) {
            Some(i) => {
                s.recursion[i].1 -= 1;
                if s.recursion[i].1 == 0 {
                    s.recursion.swap_remove(i);
                }
                true
            }
            None => false,
        });
        if inner {
            return 0;
        }
    }
    mutex_op(EventKind::Unlock, m, site);
    if !owned && sync_object::decode(m).is_none() {
        // Unlocking a mutex one does not hold is undefined behaviour: a bug worth reporting.
        violation(ViolationKind::Abort, &format!("T{} unlocks mutex {m:#x}, which it does not hold", current()));
    }
    with(|s| s.owners.retain(|&(x, _)| x != m));
    done();
    0
}

pub fn unlock(m: u64, site: u64) -> c_int {
    unlock_kind(m, site, mutex_kind::kind(m))
}

pub fn trylock(m: u64, site: u64) -> c_int {
    trylock_kind(m, site, mutex_kind::kind(m))
}

/// Try to lock a mutex of type `kind` (a recursive one the caller holds: again, no event).
pub fn trylock_kind(m: u64, site: u64, kind: i32) -> c_int {
    if kind == mutex_kind::RECURSIVE && with(|s| s.owner(m) == Some(s.current as u32)) {
        return lock_kind(m, site, kind);
    }
    mutex_op(EventKind::TryLock, m, site);
    let got = with(|s| {
        let me = s.current as u32;
        if s.owner(m).is_some() {
            s.threads[s.current].pending.as_mut().expect("granted").kind = EventKind::TryLockFail;
            false
        } else {
            s.owners.push((m, me));
            true
        }
    });
    done();
    if got { 0 } else { libc::EBUSY }
}

extern "C" fn thread_main(arg: *mut c_void) {
    let tid = arg as usize;
    thread_flag::set_active(true);
    let (routine, start_arg) = with(|s| s.threads[tid].start.take().expect("a new thread has a start routine"));
    let ret = routine(start_arg);
    exit_thread(ret);
}

/// `pthread_create`: a create event, then the child runs to its first operation.
pub fn create(out: *mut u64, routine: StartRoutine, arg: *mut c_void, site: u64) -> c_int {
    // Announced with the id the child would get now; other threads may create threads before
    // this create is granted, so the id is fixed only when it is performed.
    grant(EventKind::Create, Some(SiteId(site)), with(|s| s.threads.len()) as u64, 0);
    let child = with(|s| {
        let child = s.threads.len();
        let cur = s.current;
        if let Some(op) = s.threads[cur].pending.as_mut() {
            op.addr = child as u64;
        }
        child
    });
    if child >= MAX_THREADS {
        finish(ChildOutcome::Unsupported(&format!("the program creates more than {MAX_THREADS} threads (EXPLORE's limit)")));
    }
    let made = with(|s| {
        let stack = stack_pool::stack(child)?;
        let parent = s.current;
        let nth = s.threads[parent].children;
        s.threads[parent].children += 1;
        s.buffer.thread(child as u32, Some(parent as u32), nth);
        let tls = s.tls.map(|t| t.fresh()).unwrap_or_default();
        let range = (stack.bottom() as u64, stack.top() as u64);
        let fiber = Fiber::new(stack, thread_main, child as *mut c_void);
        let mut th = LogicalThread::new(fiber, range, tls, Some((routine, arg)));
        th.known_done = s.threads[parent].known_done;
        th.clock_ns = s.threads[parent].clock_ns;
        th.name = sync_object::child_name(s.threads[parent].name, nth);
        s.threads.push(th);
        s.threads[parent].kids.push(child);
        Some(parent)
    });
    let Some(parent) = made else {
        finish(ChildOutcome::Unsupported("no stack for a new thread"));
    };
    done();
    if !out.is_null() {
        // SAFETY: `out` is the caller's pthread_t slot (pthread_create's contract).
        unsafe { *out = handle_of(child as u32) };
    }
    with(|s| s.booting_parent = Some(parent));
    switch_to(child);
    0
}

/// `pthread_join`.
pub fn join(handle: u64, retval: *mut *mut c_void, site: u64) -> c_int {
    let Some(target) = tid_of(handle).filter(|&t| with(|s| (t as usize) < s.threads.len())) else {
        return libc::ESRCH;
    };
    grant(EventKind::Join, Some(SiteId(site)), target as u64, 0);
    let ret = with(|s| {
        let t = target as usize;
        let known = s.threads[t].known_done | 1 << t;
        let me = s.current;
        s.threads[me].known_done |= known;
        s.threads[me].clock_ns = s.threads[me].clock_ns.max(s.threads[t].clock_ns);
        s.threads[t].retval
    });
    done();
    if !retval.is_null() {
        // SAFETY: the caller's out-parameter (pthread_join's contract).
        unsafe { *retval = ret };
    }
    0
}

/// The calling thread ends (its start routine returned or it called `pthread_exit`).
pub fn exit_thread(ret: *mut c_void) -> ! {
    // An atomic block the thread is in ends with it.
    with(|s| s.threads[s.current].atomic_depth = 0);
    run_key_destructors();
    let me = current();
    grant(EventKind::Exit, None, me as u64, 0);
    done();
    if me == 0 {
        // `main` called pthread_exit: the process lives on until the other threads end.
        with(|s| s.threads[0].finished = true);
    } else {
        with(|s| {
            s.threads[me as usize].finished = true;
            s.threads[me as usize].retval = ret;
        });
    }
    leave(me as usize)
}

/// A violation (failed assert, abort, reach_error) in the running thread. The first one is the
/// execution's outcome (later ones are kept as further bugs); the thread halts for good and the
/// others go on to the end. A halted thread does nothing more, so it is independent of
/// everything after: the executions the verifier sees stay those of the program's unfolding,
/// and one thread's failure does not hide another's (DESIGN §8). `irs replay` of the schedule
/// still ends in it.
pub fn violation(kind: ViolationKind, message: &str) -> ! {
    halt(ChildOutcome::Violation(kind, message))
}

/// The running thread crashed (a signal handler calls this): it halts like a violation.
/// Nothing in the scheduler is borrowed while user code runs, so this is safe to call from the
/// handler unless the crash was inside the runtime or the allocator itself.
pub fn crashed(sig: c_int) -> ! {
    halt(ChildOutcome::Signal(sig))
}

fn halt(outcome: ChildOutcome) -> ! {
    with(|s| s.buffer.outcome(outcome));
    stop_thread(current() as usize)
}

/// The thread `me` (the running one) does nothing more: finished, never joinable.
fn stop_thread(me: usize) -> ! {
    let booting = with(|s| {
        let th = &mut s.threads[me];
        th.finished = true;
        th.halted = true;
        th.pending = None;
        th.nested.clear();
        s.booting_parent.take()
    });
    if let Some(parent) = booting {
        // It failed before its first operation: its creator goes on from the create.
        switch_to(parent);
        unreachable!("a halted thread is never resumed");
    }
    leave(me)
}

/// A finished thread hands over for good; when no thread is left the process exits (status 0,
/// as when the last thread of a program whose `main` called `pthread_exit` ends).
fn leave(me: usize) -> ! {
    let all_done = with(|s| s.threads.iter().all(|t| t.finished));
    if all_done {
        match with(|s| spin_verdict(s)) {
            Some(SpinEnd::Hangs(waits)) => finish(ChildOutcome::Deadlock(&waits)),
            Some(SpinEnd::Discarded) => {
                with(|s| s.discarding = true);
                finish(ChildOutcome::Exit(0))
            }
            None => {}
        }
        // After `main` called `pthread_exit`, the last thread's end ends the process as `exit(0)`
        // would: its exit handlers would run on whichever thread ends last, which is not a
        // function of that thread's history. Without handlers there is nothing to run.
        if crate::program::exit_handlers::atexit_handlers() > 0 && with(|s| s.ending.is_none() && !s.threads[0].halted) {
            finish(ChildOutcome::Unsupported("exit handlers (atexit) that run after the last thread ends, `main` having called pthread_exit"));
        }
        finish(ChildOutcome::Exit(0));
    }
    decide(me);
    unreachable!("a finished thread is never resumed")
}

// ---- the process's end (DESIGN §3) -------------------------------------------------------

/// The calling thread ends the process (`exit`, `_exit`, `quick_exit`, or `main` returning):
/// its `End` event. If another thread has ended the process already, this one waits for good
/// (until that end kills it): one end per process. Returns once the end is this thread's.
pub fn begin_end(site: Option<SiteId>, code: c_int) {
    if with(|s| s.ending.is_some_and(|(t, _)| t == s.current)) {
        return;
    }
    // An atomic block the thread is in ends with the process.
    with(|s| s.threads[s.current].atomic_depth = 0);
    grant(EventKind::End, site, 0, 0);
    with(|s| s.ending = Some((s.current, code)));
    done();
}

/// The next thread the ender must kill, in a deterministic order that is a function of the
/// ender's history (so that its sequence of kills is, as every thread's actions must be, see
/// DESIGN §8): breadth first over the creation tree from `main`, children in creation order,
/// skipping the ender itself and the threads whose exit it knows of through joins (they are
/// over). A thread's children are read only once it is killed or known over, when they can no
/// longer change; `queue` and `next` keep the walk's place between kills.
fn end_kill_next(queue: &mut KillQueue, next: &mut usize) -> Option<usize> {
    with(|s| {
        let me = s.current;
        if queue.len == 0 {
            queue.push(0);
        }
        while *next < queue.len {
            let v = queue.at[*next] as usize;
            let must_kill = v != me && s.threads[me].known_done & (1 << v) == 0 && !s.threads[v].killed;
            if must_kill {
                return Some(v);
            }
            *next += 1;
            for &k in &s.threads[v].kids {
                queue.push(k);
            }
        }
        None
    })
}

/// The breadth-first walk of [`end_kill_next`], on the stack (every thread once: at most
/// `MAX_THREADS`).
struct KillQueue {
    at: [u8; MAX_THREADS],
    len: usize,
}

impl KillQueue {
    fn push(&mut self, t: usize) {
        if self.len < MAX_THREADS {
            self.at[self.len] = t as u8;
            self.len += 1;
        }
    }
}

/// After the exit handlers: kill every other thread (each kill a scheduling point, so the
/// others may still move first), then end the execution with the status of the end.
pub fn complete_end() -> ! {
    let code = with(|s| s.ending.map_or(0, |(_, c)| c));
    let mut queue = KillQueue { at: [0; MAX_THREADS], len: 0 };
    let mut next = 0;
    while let Some(v) = end_kill_next(&mut queue, &mut next) {
        grant(EventKind::Kill, None, v as u64, 0);
        with(|s| {
            let th = &mut s.threads[v];
            th.finished = true;
            th.killed = true;
            th.pending = None;
            th.nested.clear();
        });
        done();
    }
    finish(ChildOutcome::Exit(code))
}

// ---- the SV-COMP interface (`sv_comp`) -------------------------------------------------------

/// `__VERIFIER_atomic_begin`: the first of a block's (nesting depth 0) is its step; the block's
/// accesses are recorded as part of it, with no decision, until the matching end.
pub fn atomic_begin(site: u64) {
    if with(|s| s.threads[s.current].atomic_depth > 0) {
        with(|s| s.threads[s.current].atomic_depth += 1);
        return;
    }
    grant(EventKind::Atomic, Some(SiteId(site)), 0, 0);
    done();
    with(|s| s.threads[s.current].atomic_depth = 1);
}

pub fn atomic_end() {
    with(|s| {
        let th = &mut s.threads[s.current];
        th.atomic_depth = th.atomic_depth.saturating_sub(1);
    });
}

/// A call of `__VERIFIER_nondet_*` with `of` values to choose from: which one (an index), as the
/// decision chose it.
pub fn nondet(site: u64, of: u32) -> u32 {
    if with(|s| s.threads[s.current].atomic_depth > 0) {
        finish(ChildOutcome::Unsupported("a __VERIFIER_nondet_* call inside an atomic block (__VERIFIER_atomic_*)"));
    }
    grant(EventKind::Nondet, Some(SiteId(site)), 0, of);
    let choice = with(|s| {
        let c = s.choice.min(of.saturating_sub(1));
        let cur = s.current;
        // The event records the value chosen.
        if let Some(op) = s.threads[cur].pending.as_mut() {
            op.addr = c as u64;
        }
        c
    });
    done();
    choice
}

/// The calling thread slept `nanos` (it returned at once: time costs nothing here, but its
/// virtual time moves on): until it runs its next operation, the default policy prefers every
/// thread that did not (see `decide`).
pub fn slept(nanos: u64) {
    if active() {
        with(|s| {
            let t = &mut s.threads[s.current];
            t.slept = true;
            t.clock_ns = t.clock_ns.saturating_add(nanos);
        });
    }
}

/// The calling thread's virtual time in ns (see `abi::clock`), then advanced by `then`: 0 when
/// no execution runs (the fork server itself). A thread that reads the clock is most often
/// waiting for time to pass (a loop that polls until a deadline), which the OS lets other
/// threads use: the default policy lets the threads that can move go first, as after a sleep.
pub fn clock_read(then: u64) -> u64 {
    if !active() {
        return 0;
    }
    with(|s| {
        let t = &mut s.threads[s.current];
        let now = t.clock_ns;
        t.clock_ns = now.saturating_add(then);
        t.slept = true;
        now
    })
}

/// Advance the calling thread's virtual time to `ns` if it is earlier (an absolute sleep).
pub fn clock_reach(ns: u64) {
    if active() {
        with(|s| {
            let t = &mut s.threads[s.current];
            t.clock_ns = t.clock_ns.max(ns);
            t.slept = true;
        });
    }
}

/// The calling thread enters a watched loop from outside (`spin_watch`).
pub fn loop_enter() {
    with(|s| s.threads[s.current].spin.enter());
}

/// The calling thread is at the top of a watched loop's header (`spin_watch`): when the
/// iteration it completed only read, the thread halts there for good (spin-assume), and the
/// others go on; at the execution's end, [`spin_verdict`] says whether it was a hang.
pub fn loop_head(site: u64) {
    let spins = with(|s| {
        let me = s.current;
        let done = s.threads[me].spin.head(site, &mut s.writes);
        let spins = s.threads[me].atomic_depth == 0 && done == Iteration::Pure;
        let from = std::mem::replace(&mut s.threads[me].iteration_step, s.step);
        if spins && s.policy.iterates() {
            // `Policy::Anchor`: the loop iterates; the iteration's steps are flagged, so that the
            // schedule without them is an execution in which the thread did not iterate.
            s.buffer.mark_read_only(me as u32, from);
            return false;
        }
        spins
    });
    if let (true, Some(k)) = (spins, crate::thread::spin_watch::bound()) {
        // `--spin-bound`: iterate on, up to the bound; past it the execution is discarded.
        if with(|s| s.threads[s.current].spin.pure_run()) > k {
            assume_failed(site)
        }
        return;
    }
    if spins {
        let me = current() as usize;
        with(|s| s.threads[me].spin_halted = true);
        stop_thread(me)
    }
}

/// How an execution in which threads halted in watched loops ends (`spin_watch`), when nothing
/// can move any more: `None` when no thread spins; discarded when some spinning thread's reads
/// were written after it read them (it would have moved: that is explored where the
/// write comes before its reads); otherwise the program hangs, a livelock, and the report
/// says where each thread spins or waits.
fn spin_verdict(s: &Scheduler) -> Option<SpinEnd> {
    let spinners: Vec<usize> = (0..s.threads.len()).filter(|&t| s.threads[t].spin_halted).collect();
    if spinners.is_empty() {
        return None;
    }
    if spinners.iter().any(|&t| !s.threads[t].spin.unwritten_since_last(&s.writes)) {
        return Some(SpinEnd::Discarded);
    }
    // Where each thread spins, then what the others wait for.
    let blocked = (0..s.threads.len()).filter(|&t| !s.threads[t].finished);
    let waits: Vec<String> = spinners.iter().copied().chain(blocked).filter_map(|t| s.describe_wait(t)).collect();
    Some(SpinEnd::Hangs(waits.join("; ")))
}

/// See [`spin_verdict`].
enum SpinEnd {
    Discarded,
    Hangs(String),
}

/// `__VERIFIER_assume` with a false condition: the execution is one the program rules out. It
/// ends there, as at the process's end (DESIGN §3): the other threads are killed where they
/// stand, so that everything they could do before the failed assumption is explored in other
/// executions (with the kills moved after it), and nothing after it is, as SV-COMP's semantics
/// says. An atomic block the thread is in leaves nothing behind that anyone sees.
pub fn assume_failed(site: u64) -> ! {
    with(|s| {
        let th = &mut s.threads[s.current];
        th.atomic_depth = 0;
        th.atomic_open = 0;
    });
    begin_end(Some(SiteId(site)), 0);
    with(|s| s.discarding = true);
    complete_end()
}

/// `main` returned with `code`: as `exit(code)` (the end, the exit handlers, the kills).
pub fn main_returned(code: c_int) -> ! {
    begin_end(None, code);
    if crate::program::exit_handlers::nothing_to_run() {
        complete_end();
    }
    // SAFETY: the C library's exit: it runs the program's exit handlers on this fiber (events
    // like any other) and then the runtime's own hook, which completes the end and never
    // returns into it (the process's end's exit hook).
    unsafe { libc::exit(code) }
}
