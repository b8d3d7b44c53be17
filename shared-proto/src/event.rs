//! Events: one execution of a visible operation by a thread (DESIGN §3), identified in a run by
//! `(tid, k)`: `k` counts the visible events of `tid` before this one.

use crate::access_kind::AccessKind;
use crate::ids::{SiteId, ThreadId};
use crate::logical_addr::LogicalAddr;
use serde::{Deserialize, Serialize};

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum EventKind {
    Access(AccessKind),
    Lock,
    Unlock,
    TryLock,
    TryLockFail,
    Create,
    Join,
    Exit,
    /// The process's end: `exit`/`_exit`/`quick_exit` called, or `main` returned (DESIGN §3).
    /// Its object is the process: two ends never both happen.
    End,
    /// At the process's end, the thread that ends the process cuts another thread off where it
    /// stands (object: that thread). One per live thread, after `End` and the exit handlers;
    /// the other threads may still move until their own `Kill`.
    Kill,
    /// A call of `__VERIFIER_nondet_*`: the thread chooses one value of a small domain (object:
    /// [`ObjectRef::Choice`]). Each value is another event; they conflict with each other.
    Nondet,
    /// The start of an atomic block (`__VERIFIER_atomic_begin`, or a call of a function whose
    /// name starts with `__VERIFIER_atomic_`): the block's accesses are part of this one step,
    /// with no other thread in between (object: [`ObjectRef::Atomic`]).
    Atomic,
    /// `sem_init`: the semaphore's count is set (object: [`ObjectRef::Sem`], whose `value` is
    /// the count given).
    SemInit,
    /// `sem_post`: one more. Two posts commute (see `crate::equivalence`).
    SemPost,
    /// `sem_wait`, one event: enabled only while the count is above 0, it takes one.
    SemWait,
    /// `sem_trywait` (or a timed wait, a trywait in EXPLORE) that took one.
    SemTryWait,
    /// `sem_trywait` (or a timed wait) that found the count 0: `EAGAIN` (`ETIMEDOUT`).
    SemTryFail,
    /// `sem_getvalue`: reads the count.
    SemValue,
    /// `pthread_barrier_init`: the barrier waits for `value` threads (object:
    /// [`ObjectRef::Barrier`]).
    BarrierInit,
    /// `pthread_barrier_wait`, its first half: the thread arrives. Two arrivals commute.
    BarrierArrive,
    /// Its second half for the thread that releases the generation (enabled once every thread
    /// of it has arrived, and it is not released yet): it returns `PTHREAD_BARRIER_SERIAL_THREAD`.
    BarrierRelease,
    /// Its second half for the others (enabled once their generation is released): it returns 0.
    BarrierDepart,
    /// `pthread_rwlock_rdlock` (object: [`ObjectRef::RwLock`]), one event: enabled only while
    /// no writer holds the lock (readers preferred). Two read acquisitions commute.
    RwRead,
    /// `pthread_rwlock_wrlock`, one event: enabled only while nobody holds the lock.
    RwWrite,
    /// `pthread_rwlock_tryrdlock` (or a timed one, a try in EXPLORE) that got in.
    RwTryRead,
    /// ... that found a writer: `EBUSY` (`ETIMEDOUT`).
    RwTryReadFail,
    /// `pthread_rwlock_trywrlock` (or a timed one) that got in.
    RwTryWrite,
    /// ... that found it held: `EBUSY` (`ETIMEDOUT`).
    RwTryWriteFail,
    /// `pthread_rwlock_unlock` by a reader.
    RwReadUnlock,
    /// `pthread_rwlock_unlock` by the writer.
    RwWriteUnlock,
}

impl EventKind {
    pub fn name(self) -> &'static str {
        match self {
            EventKind::Access(a) => a.name(),
            EventKind::Lock => "lock",
            EventKind::Unlock => "unlock",
            EventKind::TryLock => "trylock",
            EventKind::TryLockFail => "trylock-fail",
            EventKind::Create => "create",
            EventKind::Join => "join",
            EventKind::Exit => "exit",
            EventKind::End => "end",
            EventKind::Kill => "kill",
            EventKind::Nondet => "nondet",
            EventKind::Atomic => "atomic",
            EventKind::SemInit => "sem-init",
            EventKind::SemPost => "sem-post",
            EventKind::SemWait => "sem-wait",
            EventKind::SemTryWait => "sem-trywait",
            EventKind::SemTryFail => "sem-trywait-fail",
            EventKind::SemValue => "sem-getvalue",
            EventKind::BarrierInit => "barrier-init",
            EventKind::BarrierArrive => "barrier-arrive",
            EventKind::BarrierRelease => "barrier-release",
            EventKind::BarrierDepart => "barrier-depart",
            EventKind::RwRead => "rwlock-read",
            EventKind::RwWrite => "rwlock-write",
            EventKind::RwTryRead => "rwlock-tryread",
            EventKind::RwTryReadFail => "rwlock-tryread-fail",
            EventKind::RwTryWrite => "rwlock-trywrite",
            EventKind::RwTryWriteFail => "rwlock-trywrite-fail",
            EventKind::RwReadUnlock => "rwlock-read-unlock",
            EventKind::RwWriteUnlock => "rwlock-write-unlock",
        }
    }

    /// An operation on a semaphore ([`ObjectRef::Sem`]).
    pub fn on_semaphore(self) -> bool {
        matches!(self, EventKind::SemInit | EventKind::SemPost | EventKind::SemWait | EventKind::SemTryWait | EventKind::SemTryFail | EventKind::SemValue)
    }

    /// An operation of a natively modelled primitive that commutes with every other of the same
    /// primitive by another thread that also does (see `crate::equivalence`): a post; an
    /// arrival at a barrier or a departure from it; a reader's acquisition (tried or not, got
    /// or not) or release of an rwlock.
    pub fn commutes_natively(self) -> bool {
        matches!(
            self,
            EventKind::SemPost | EventKind::BarrierArrive | EventKind::BarrierDepart | EventKind::RwRead | EventKind::RwTryRead | EventKind::RwTryReadFail | EventKind::RwReadUnlock
        )
    }

    /// An operation on an rwlock ([`ObjectRef::RwLock`]).
    pub fn on_rwlock(self) -> bool {
        matches!(
            self,
            EventKind::RwRead | EventKind::RwWrite | EventKind::RwTryRead | EventKind::RwTryReadFail | EventKind::RwTryWrite | EventKind::RwTryWriteFail | EventKind::RwReadUnlock | EventKind::RwWriteUnlock
        )
    }

    /// An operation on a barrier ([`ObjectRef::Barrier`]).
    pub fn on_barrier(self) -> bool {
        matches!(self, EventKind::BarrierInit | EventKind::BarrierArrive | EventKind::BarrierRelease | EventKind::BarrierDepart)
    }

}

impl EventKind {
    /// A stable small code (the explore buffer stores kinds as integers).
    pub fn code(self) -> u32 {
        match self {
            EventKind::Access(a) => a.code() as u32,
            EventKind::Lock => 16,
            EventKind::Unlock => 17,
            EventKind::TryLock => 18,
            EventKind::TryLockFail => 19,
            EventKind::Create => 20,
            EventKind::Join => 21,
            EventKind::Exit => 22,
            EventKind::End => 23,
            EventKind::Kill => 24,
            EventKind::Nondet => 25,
            EventKind::Atomic => 27,
            EventKind::SemInit => 28,
            EventKind::SemPost => 29,
            EventKind::SemWait => 30,
            EventKind::SemTryWait => 31,
            EventKind::SemTryFail => 32,
            EventKind::SemValue => 33,
            EventKind::BarrierInit => 34,
            EventKind::BarrierArrive => 35,
            EventKind::BarrierRelease => 36,
            EventKind::BarrierDepart => 37,
            EventKind::RwRead => 38,
            EventKind::RwWrite => 39,
            EventKind::RwTryRead => 40,
            EventKind::RwTryReadFail => 41,
            EventKind::RwTryWrite => 42,
            EventKind::RwTryWriteFail => 43,
            EventKind::RwReadUnlock => 44,
            EventKind::RwWriteUnlock => 45,
        }
    }

    pub fn from_code(code: u32) -> Option<EventKind> {
        Some(match code {
            0..=15 => EventKind::Access(AccessKind::from_code(code as u8)?),
            16 => EventKind::Lock,
            17 => EventKind::Unlock,
            18 => EventKind::TryLock,
            19 => EventKind::TryLockFail,
            20 => EventKind::Create,
            21 => EventKind::Join,
            22 => EventKind::Exit,
            23 => EventKind::End,
            24 => EventKind::Kill,
            25 => EventKind::Nondet,
            27 => EventKind::Atomic,
            28 => EventKind::SemInit,
            29 => EventKind::SemPost,
            30 => EventKind::SemWait,
            31 => EventKind::SemTryWait,
            32 => EventKind::SemTryFail,
            33 => EventKind::SemValue,
            34 => EventKind::BarrierInit,
            35 => EventKind::BarrierArrive,
            36 => EventKind::BarrierRelease,
            37 => EventKind::BarrierDepart,
            38 => EventKind::RwRead,
            39 => EventKind::RwWrite,
            40 => EventKind::RwTryRead,
            41 => EventKind::RwTryReadFail,
            42 => EventKind::RwTryWrite,
            43 => EventKind::RwTryWriteFail,
            44 => EventKind::RwReadUnlock,
            45 => EventKind::RwWriteUnlock,
            _ => return None,
        })
    }

    /// The object of an event of this kind, from the integers the explore buffer keeps.
    pub fn object(self, addr: u64, size: u32, logical: Option<LogicalAddr>) -> ObjectRef {
        match self {
            EventKind::Access(_) => ObjectRef::Memory { addr, size, logical },
            EventKind::Lock | EventKind::Unlock | EventKind::TryLock | EventKind::TryLockFail => ObjectRef::Mutex { addr, logical },
            EventKind::Create | EventKind::Join | EventKind::Exit | EventKind::Kill => ObjectRef::Thread(ThreadId(addr as u32)),
            EventKind::End => ObjectRef::Process,
            EventKind::Nondet => ObjectRef::Choice { value: addr as u32, of: size },
            EventKind::Atomic => ObjectRef::Atomic,
            k if k.on_semaphore() => ObjectRef::Sem { addr, logical, value: size },
            k if k.on_barrier() => ObjectRef::Barrier { addr, logical, value: size },
            k if k.on_rwlock() => ObjectRef::RwLock { addr, logical },
            _ => unreachable!("every kind has an object"),
        }
    }
}

impl ObjectRef {
    /// `(addr, size)` as the explore buffer keeps them (a thread's id in `addr`).
    pub fn to_raw(self) -> (u64, u32) {
        match self {
            ObjectRef::Memory { addr, size, .. } => (addr, size),
            ObjectRef::Mutex { addr, .. } | ObjectRef::RwLock { addr, .. } => (addr, 0),
            ObjectRef::Thread(t) => (t.0 as u64, 0),
            ObjectRef::Process | ObjectRef::Atomic => (0, 0),
            ObjectRef::Choice { value, of } => (value as u64, of),
            ObjectRef::Sem { addr, value, .. } | ObjectRef::Barrier { addr, value, .. } => (addr, value),
        }
    }
}

/// What an event acts on.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum ObjectRef {
    /// Memory at a raw address, `size` bytes (0 when the size is not known statically), and its
    /// logical address where the runtime knows it (EXPLORE).
    Memory { addr: u64, size: u32, logical: Option<LogicalAddr> },
    /// A mutex, by the raw address of its `pthread_mutex_t`.
    /// And its logical address where the runtime knows it (EXPLORE): a mutex in a heap block
    /// is named by the block, whatever address the allocator gave it in this run.
    Mutex { addr: u64, logical: Option<LogicalAddr> },
    /// A logical thread (create, join, exit, kill).
    Thread(ThreadId),
    /// The process (its end).
    Process,
    /// What a call of `__VERIFIER_nondet_*` chose: value `value` of the `of` values explored
    /// (for a pending call, `value` is 0 and `of` says how many there are).
    Choice { value: u32, of: u32 },
    /// Atomic blocks: all of them are ordered by it (see `EventKind::Atomic`).
    Atomic,
    /// A semaphore, by the raw address of its `sem_t` and its logical address where the runtime
    /// knows it; `value` is the count a `sem_init` sets (0 for the other operations).
    Sem { addr: u64, logical: Option<LogicalAddr>, value: u32 },
    /// A barrier, by the raw address of its `pthread_barrier_t` and its logical address where
    /// the runtime knows it; `value` is the count of an init, the generation of a release or a
    /// departure (0 for an arrival).
    Barrier { addr: u64, logical: Option<LogicalAddr>, value: u32 },
    /// A read-write lock, by the raw address of its `pthread_rwlock_t` and its logical address
    /// where the runtime knows it.
    RwLock { addr: u64, logical: Option<LogicalAddr> },
}

/// An operation a thread is about to perform (EXPLORE records, per step, that of every enabled
/// thread: DESIGN §7).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct PendingOp {
    pub tid: ThreadId,
    pub site: Option<SiteId>,
    pub kind: EventKind,
    pub object: ObjectRef,
    /// What a store stores or an update compares and writes (EXPLORE, accesses of at most 8
    /// bytes the pass gave a value for; see `crate::value_model`).
    pub value: Option<crate::operand::Valued>,
}

/// One scheduling decision: which thread ran, and what every enabled thread was about to do.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Step {
    pub chosen: ThreadId,
    pub enabled: Vec<PendingOp>,
    /// Index in the trace's events of the first event of the chosen operation (an operation is
    /// one event, except a memcpy between two shared objects: a load and a store).
    pub first_event: u32,
    /// For a `Kill`: what the killed thread was about to do, enabled or not (`None` when it had
    /// finished). The verifier needs it: that operation never happens in this run, and it is
    /// an alternative to the kill.
    pub cut: Option<PendingOp>,
    /// For a call of `__VERIFIER_nondet_*`: the value it took (an index into the domain; 0
    /// otherwise). With `chosen`, what a schedule says of this step (see `ThreadId::with_choice`).
    pub choice: u32,
    /// A step of an iteration of a watched loop that only read, in a run under
    /// `Policy::Anchor` (where such loops iterate instead of halting the thread): leaving these
    /// steps out of the schedule gives an execution in which no thread halts (`spin_loop`).
    pub read_only: bool,
}

impl Step {
    /// This step as a schedule's entry.
    pub fn entry(&self) -> ThreadId {
        self.chosen.with_choice(self.choice)
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Event {
    pub tid: ThreadId,
    pub k: u32,
    /// The instrumented instruction; `None` for events the runtime makes itself (the exit of a
    /// thread whose start routine returned, `main`'s return).
    pub site: Option<SiteId>,
    pub kind: EventKind,
    pub object: ObjectRef,
    /// What a store stores or an update compares and writes (EXPLORE, accesses of at most 8
    /// bytes the pass gave a value for; see `crate::value_model`).
    pub value: Option<crate::operand::Valued>,
}
