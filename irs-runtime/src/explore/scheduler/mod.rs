//! The controlled scheduler of EXPLORE (DESIGN §7). Every logical thread of the
//! program is a [`Fiber`] on the one OS thread of an execution, so exactly one runs between
//! visible events by construction.
//!
//! At each visible operation the running thread publishes it as its pending operation and makes
//! the scheduling decision: the next thread of the requested schedule, or by the default policy
//! (keep running the current thread while it is enabled, else the lowest enabled id: fewest
//! preemptions, deterministic). Switching to a thread *is* granting its pending operation: it
//! resumes inside its own call of [`grant`](decision::grant), returns, and performs it. A new thread runs at once
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
//!
//! This file holds the scheduler's state, [`Scheduler`] with one [`LogicalThread`] per thread of
//! the program, and the one way to reach it, [`with`]; what the rest of the runtime calls is
//! re-exported here from the file that implements it:
//!
//! - [`execution`]: an execution's life: set up, run from its host, paused at a snapshot and
//!   resumed, finished;
//! - [`decision`]: the requested schedule, the decision at each visible operation (the schedule,
//!   then the default, round-robin, random or anchor policy) and the switch to the chosen thread;
//! - [`waits`]: whether a thread can move and, when none can, what each waits for (a deadlock,
//!   or the verdict on threads that spin);
//! - [`threads`]: creating, joining and ending threads, halting one at a violation or a crash;
//! - [`thread_data`]: what the C library keeps per thread: `pthread_t` handles, `pthread_self`,
//!   thread-specific data;
//! - [`memory`]: heap blocks, logical addresses, and accesses as visible operations;
//! - [`mutexes`]: mutexes and the internal objects of the other primitives;
//! - [`ending`]: the process's end (its `End` event, the kills, `main` returning);
//! - [`verifier`]: the SV-COMP interface (atomic blocks, nondet values, failed assumptions);
//! - [`spin_loops`]: the loops watched for spinning;
//! - [`virtual_time`]: each thread's virtual clock.
//!
//! The files depend on this state and on one another in one direction only (`execution` and
//! `waits` first, then `decision`, then the operations); this file only declares and re-exports
//! them. Nothing may hold a borrow of the scheduler across a fiber switch (see [`with`]).

mod barriers;
mod decision;
mod ending;
mod execution;
mod memory;
mod mutexes;
mod rwlocks;
mod semaphores;
mod spin_loops;
mod thread_bound;
mod thread_data;
mod threads;
mod update_check;
mod verifier;
mod virtual_time;
mod waits;

pub use barriers::{barrier_init, barrier_wait};
pub use decision::{load_schedule, schedule_region};
pub use ending::{begin_end, complete_end, main_returned};
pub use thread_bound::prepare as thread_bound_prepare;
pub use execution::{buffer_mark, finish, init, live_stacks, on_pause, pause_to_host, record_signal, restart_from, resume, run};
pub use memory::{access_after, access_before, allocated, block_size, freed, is_heap_block, RawOperand, Release};
pub use mutexes::{lock, lock_kind, mutex_reinit, trylock, trylock_kind, unlock, unlock_kind};
pub use rwlocks::{rwlock_acquire, rwlock_init, rwlock_relock, rwlock_try, rwlock_unlock};
pub use semaphores::{sem_count_now, sem_getvalue, sem_init, sem_post, sem_trywait, sem_wait};
pub use spin_loops::{loop_enter, loop_head, wait_loop_head};
pub use thread_data::{get_specific, key_create, key_delete, self_handle, set_specific};
pub use threads::{crashed, create, exit_thread, join, violation};
pub use verifier::{assume_failed, atomic_begin, atomic_end, nondet};
pub use virtual_time::{clock_reach, clock_read, slept};

use crate::explore::fiber::Fiber;
use crate::explore::fiber_tls::StaticTls;
use crate::thread::spin_watch::{ThreadSpin, Writes};
use shared_proto::explore_buffer::{BufferWriter, OpRecord};
use shared_proto::explore_protocol::Policy;
use std::cell::UnsafeCell;
use std::collections::BTreeMap;
use std::ffi::{c_int, c_void};

pub type StartRoutine = extern "C" fn(*mut c_void) -> *mut c_void;

/// What an execution does from where it starts (`main` or a pause). Its schedule is in
/// [`SCHEDULE`](decision::SCHEDULE): not on the heap, whose layout every execution of a
/// schedule must share (from `main` or from a snapshot alike).
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
    /// What its granted update found at its address (`memory::access_before`), to tell once it
    /// is done whether it changed memory.
    found: u64,
    next_k: u32,
    children: u32,
    /// Its children, in creation order (the order the process's end kills threads in).
    kids: Vec<usize>,
    /// Threads whose exit is in this thread's history through joins and creations (a bit per
    /// thread): the end does not kill them, they are over (see `ending::end_kill_next`).
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
            found: 0,
            next_k: 0,
            children: 0,
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
    /// The first `schedule_len` entries of [`SCHEDULE`](decision::SCHEDULE) are the requested
    /// thread ids.
    schedule_len: usize,
    /// Pause at the decision of this step and serve continuations (a snapshot).
    snapshot_at: Option<u32>,
    step: u32,
    /// Under a `Follow` policy: the schedule's entries before this one are taken (the ones
    /// taken out of order moved before it, see `decision`).
    hint: usize,
    /// Held mutexes and their owners (a handful at a time: a list beats a hash table here).
    owners: Vec<(u64, u32)>,
    /// Recursive mutexes locked more than once: the locks beyond the first (no events).
    recursion: Vec<(u64, u32)>,
    /// Semaphores' counts, by address (`semaphores`).
    sems: Vec<(u64, u32)>,
    /// Barriers' states, by address (`barriers`).
    barriers: Vec<(u64, barriers::BarrierState)>,
    /// Rwlocks' holders, by address (`rwlocks`).
    rwlocks: Vec<(u64, rwlocks::RwState)>,
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
    /// Blocks freed and not allocated again, by start address, so that a use of one is
    /// reported as what it is.
    freed: BTreeMap<u64, memory::Freed>,
    /// The freed blocks the execution keeps from the C library (`memory::freed`), oldest first,
    /// and their bytes in all.
    quarantine: std::collections::VecDeque<u64>,
    quarantined: u64,
    /// Thread-specific data keys created so far (`true` while not deleted), and destructors.
    keys: Vec<(bool, Option<extern "C" fn(*mut c_void)>)>,
    /// The execution's clock: `now - clock_base` is its running time since `main` (µs), moved
    /// forward when a continuation resumes it so that the pause does not count.
    clock_base: u64,
    /// Its running time when it paused at a snapshot. (The clock is read through the vDSO: tens
    /// of ns, once per decision.)
    paused_at: u64,
    /// The process's end, once a thread has performed it: that thread and the exit status.
    /// From then on no other end is enabled, and the ender kills the other threads one by one.
    ending: Option<(usize, c_int)>,
    /// The end is a cut at `--max-threads` (the bound), not the program's (`thread_bound`).
    thread_bound: Option<u32>,
    /// The value the last decision chose for the chosen thread's `__VERIFIER_nondet_*` call (an
    /// index into the explored domain; see `ThreadId::CHOICE_SHIFT`).
    choice: u32,
    /// The end is a failed `__VERIFIER_assume`: the execution is discarded.
    discarding: bool,
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

impl Scheduler {
    fn owner(&self, m: u64) -> Option<u32> {
        self.owners.iter().find(|&&(x, _)| x == m).map(|&(_, t)| t)
    }

    /// The execution's running time so far, µs (saturating at `u32::MAX`: 71 minutes).
    fn elapsed(&self) -> u32 {
        monotonic_micros().saturating_sub(self.clock_base).min(u32::MAX as u64) as u32
    }
}

pub fn current() -> u32 {
    with(|s| s.current as u32)
}
