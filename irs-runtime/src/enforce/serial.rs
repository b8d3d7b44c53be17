//! Serialised runs (DESIGN §4 "Inputs"): a run that no verification covers (its input
//! is not verified yet and the user did not wait, `IRS_SERIAL=1`; or it left the verified trace
//! and the reaction is `serial`) runs one thread at a time, by the verifier's default policy:
//! keep running the thread that ran last while it can, else the lowest-numbered thread that can
//! (EXPLORE's `Policy::Default`, `explore::scheduler::decision`). Serialised from the start, the
//! run is the first execution the verifier explores for its input: deterministic and replayable,
//! but not verified. From a divergence on, the rest of the run is serialised the same way.
//!
//! Threads are OS threads here, not fibers: before each event a thread *parks* with what it is
//! about to do (a step, a lock of a mutex, a join of a thread). A decision is taken only when
//! every live thread is parked (or has exited), so what runs next depends on the program alone,
//! never on the OS's timing. A lock is enabled when the mutex is free, a join when the thread
//! has ended. With no enabled thread left, the run is deadlocked: reported, and aborted (the
//! plain program would hang there).
//!
//! What the OS would give other threads and a strict turn would not: a thread that sleeps lets
//! every other thread that can move go first (`yield_turn`), and a thread running a signal
//! handler (`signals`) is neither waited for nor given the turn meanwhile; handlers are kept out
//! of the state's lock, and waiting threads sleep outside it.

use crate::thread::spin_watch::{ThreadSpin, Writes};
use parking_lot::{Mutex, MutexGuard};
use shared_proto::{AccessKind, EventKind};
use std::cell::Cell;
use std::collections::BTreeSet;
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};

/// What a parked thread is about to do.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Op {
    Step,
    Lock(usize),
    /// Join the thread with this `pthread_t`.
    Join(u64),
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Th {
    /// An id no thread has (yet): not created when serialisation began.
    Absent,
    /// Running its own code (not at an event), or holding the turn.
    Between,
    Parked(Op),
    /// In a real sleep (`sleep_for_real`): neither waited for nor given the turn until it wakes.
    Asleep,
    Exited,
}

struct State {
    threads: Vec<Th>,
    /// Where each thread is in the loops the runtime watches (`spin_watch`), and the writes: a
    /// thread that would only repeat its last iteration does not keep the turn while another
    /// can move (the verifier's default policy does the same).
    spin: Vec<ThreadSpin>,
    writes: Writes,
    /// Who may run its event; `None` while a decision waits for threads still between events.
    turn: Option<u32>,
    /// Who ran last (the default policy keeps it running while it can).
    last: u32,
    /// Mutexes known to be held.
    locked: BTreeSet<usize>,
    /// Threads (`pthread_t`) that have ended.
    exited: BTreeSet<u64>,
    /// Threads that gave their turn away at a sleep (`yield_turn`): another thread that can
    /// move goes first.
    yielded: BTreeSet<u32>,
}

static ON: AtomicBool = AtomicBool::new(false);
/// Threads being created whose first registration has not happened yet: a decision waits for
/// them (a thread about to exist can be the one that runs next). Every access is SeqCst: it is
/// changed outside the state's lock and read under it, once per thread creation (never per
/// event), so the simplest order costs nothing that matters.
static CREATING: AtomicU32 = AtomicU32::new(0);
static STATE: Mutex<State> = Mutex::new(State { threads: Vec::new(), spin: Vec::new(), writes: Writes { count: 0, last: None }, turn: None, last: 0, locked: BTreeSet::new(), exited: BTreeSet::new(), yielded: BTreeSet::new() });
/// Raised at every change a parked thread may be waiting for; parked threads sleep on it (a
/// futex) outside the state's lock, with signals deliverable (`acquire`).
static CHANGED: AtomicU32 = AtomicU32::new(0);

fn notify() {
    // SeqCst: a waiter reads the count under the state's lock before it sleeps on it; the
    // change was made under the lock before this.
    CHANGED.fetch_add(1, Ordering::SeqCst);
    crate::sync::futex::wake_all(&CHANGED);
}

/// The state, locked with the program's signal handlers kept out (`signal_state::Masked`): a
/// handler that waits for another thread (a pool's pause) must not interrupt its thread while
/// it holds the lock every other thread needs.
struct Locked {
    guard: std::mem::ManuallyDrop<MutexGuard<'static, State>>,
    _mask: crate::thread::signal_state::Masked,
}

impl std::ops::Deref for Locked {
    type Target = State;
    fn deref(&self) -> &State {
        &self.guard
    }
}

impl std::ops::DerefMut for Locked {
    fn deref_mut(&mut self) -> &mut State {
        &mut self.guard
    }
}

impl Drop for Locked {
    fn drop(&mut self) {
        // SAFETY: dropped once, here; the mask (the next field) is restored after the unlock.
        unsafe { std::mem::ManuallyDrop::drop(&mut self.guard) };
    }
}

fn state() -> Locked {
    let mask = crate::thread::signal_state::Masked::new();
    Locked { guard: std::mem::ManuallyDrop::new(STATE.lock()), _mask: mask }
}

thread_local! {
    /// The calling thread's id in the serialised run: `None` while it has none yet, `GONE` once
    /// it has ended (see `thread_exited`).
    static SID: Cell<Option<u32>> = const { Cell::new(None) };
}

/// The id of a thread that has ended: what it still runs (its keys' and thread-locals'
/// destructors) runs outside the turn, as a signal handler does, and its id serves a thread
/// created later, so that a program whose threads come and go keeps a table of the live ones.
const GONE: u32 = u32::MAX;

/// The calling thread's id, while it takes part in the serialised run.
fn sid() -> Option<u32> {
    SID.with(|c| c.get()).filter(|&t| t != GONE)
}

/// Threads running a signal handler (`signals`), by id (the first `AWAY_SLOTS`): neither
/// waited for nor given the turn meanwhile, so that a handler never waits on the thread it
/// interrupted, nor other threads on the handler. Set and cleared by the thread itself in its
/// handler, where it cannot take the state's lock (it may have interrupted itself inside it):
/// waiters re-decide every `REDECIDE` instead of being woken.
const AWAY_SLOTS: usize = 1024;
#[allow(clippy::declare_interior_mutable_const)]
const HOME: AtomicBool = AtomicBool::new(false);
static AWAY: [AtomicBool; AWAY_SLOTS] = [HOME; AWAY_SLOTS];
const REDECIDE: std::time::Duration = std::time::Duration::from_millis(5);

fn away(t: usize) -> bool {
    // Relaxed: a hint re-read at every decision; the state itself is under the lock.
    AWAY.get(t).is_some_and(|a| a.load(Ordering::Relaxed))
}

/// The calling thread enters (`true`) or leaves a signal handler (outermost only).
pub fn set_away(on: bool) {
    if let Some(t) = sid() {
        if let Some(a) = AWAY.get(t as usize) {
            // Relaxed: see `away`.
            a.store(on, Ordering::Relaxed);
        }
    }
}

/// Thread `t` (its id in the verified prefix) enters (`true`) or leaves a real blocking wait
/// that began before the run was serialised (see `enforcer::blocking`): like a signal handler,
/// it is neither waited for nor given the turn meanwhile.
pub fn set_away_id(t: u32, on: bool) {
    if let Some(a) = AWAY.get(t as usize) {
        // Relaxed: see `away`.
        a.store(on, Ordering::Relaxed);
    }
}

/// Is the run serialised (from now on)?
pub fn on() -> bool {
    // Acquire: pairs with the release in `begin`: the thread table is set up.
    ON.load(Ordering::Acquire)
}

/// Is the calling thread one of the serialised ones?
pub fn mine() -> bool {
    on() && sid().is_some() && !crate::thread::signal_state::inside()
}

/// Serialise from here on. `threads[i]`: does thread `i` exist (`Some(true)` live, `Some(false)`
/// exited, `None` not created); `exited`: the handles of the threads that have ended. `me`: the
/// calling thread's id.
pub fn begin(threads: Vec<Option<bool>>, exited: Vec<u64>, me: Option<u32>) {
    let mut s = state();
    if ON.load(Ordering::Relaxed) {
        return;
    }
    s.exited.extend(exited);
    s.threads = threads.into_iter().map(|t| match t { Some(true) => Th::Between, Some(false) => Th::Exited, None => Th::Absent }).collect();
    s.turn = None;
    s.last = me.unwrap_or(0);
    if let Some(t) = me {
        SID.with(|c| c.set(Some(t)));
    }
    // Release: see `on`.
    ON.store(true, Ordering::Release);
    notify();
}

/// Serialised from the start: only `main` exists.
pub fn begin_at_start() {
    begin(vec![Some(true)], Vec::new(), Some(0));
}

/// A thread that was running when serialisation began learns its id (its logical id in the
/// prefix) at its next event; a thread that had ended by then takes no part (its id may serve
/// another thread).
pub fn adopt(id: Option<u32>) {
    if SID.with(|c| c.get()).is_some() {
        return;
    }
    let id = id.map(|t| if state().threads.get(t as usize).is_some_and(|th| *th == Th::Exited) { GONE } else { t });
    SID.with(|c| c.set(id));
}

/// A creator is about to create a thread (before `pthread_create`); the new thread's id, when
/// serialised (`None` otherwise: it learns it otherwise).
pub fn creating() -> Option<u32> {
    CREATING.fetch_add(1, Ordering::SeqCst);
    if !mine() {
        return None;
    }
    let mut s = state();
    // The lowest id of a thread that has ended, else a new one.
    let t = match s.threads.iter().position(|th| *th == Th::Exited) {
        Some(t) => {
            s.threads[t] = Th::Between;
            t
        }
        None => {
            s.threads.push(Th::Between);
            s.threads.len() - 1
        }
    };
    Some(t as u32)
}

/// A thread was created with `handle`: the C library reuses the handles of threads that have
/// ended, so a join of it is not enabled by an earlier thread's end. (The new thread cannot
/// have ended yet: its exit waits for a turn, and its creator holds the turn.)
pub fn created(handle: u64) {
    if on() {
        state().exited.remove(&handle);
    }
}

/// The creation failed: the thread will never register.
pub fn creation_failed(id: Option<u32>) {
    let mut s = state();
    if let Some(t) = id {
        if let Some(th) = s.threads.get_mut(t as usize) {
            *th = Th::Exited;
        }
    }
    CREATING.fetch_sub(1, Ordering::SeqCst);
    notify();
}

/// In a new thread, before its start routine: it exists (with `id`, when serialised).
pub fn started(id: Option<u32>) {
    if let Some(t) = id {
        SID.with(|c| c.set(Some(t)));
    }
    if !on() {
        // Not serialised (the common case: no lock taken). Should the run be serialised just
        // now, this thread joins at its next event (see `adopt`).
        CREATING.fetch_sub(1, Ordering::SeqCst);
        return;
    }
    let mut s = state();
    if let Some(t) = id {
        if let Some(th) = s.threads.get_mut(t as usize) {
            if *th == Th::Absent {
                *th = Th::Between;
            }
        }
    }
    CREATING.fetch_sub(1, Ordering::SeqCst);
    notify();
}

fn enabled(s: &State, op: Op) -> bool {
    match op {
        Op::Step => true,
        Op::Lock(m) => !s.locked.contains(&m),
        Op::Join(t) => s.exited.contains(&t),
    }
}

/// Take a decision if every live thread is parked: the last runner if it can move, else the
/// lowest id that can; if none can without having yielded or spinning, the next one after the
/// last runner that can run at all.
fn decide(s: &mut State) {
    if s.turn.is_some_and(|t| away(t as usize)) {
        // In a signal handler: it gives the turn up (it takes it again at its next event).
        s.turn = None;
    }
    if s.turn.is_some() || CREATING.load(Ordering::SeqCst) > 0 || s.threads.iter().enumerate().any(|(t, th)| *th == Th::Between && !away(t)) {
        return;
    }
    let can = |t: usize| !away(t) && matches!(s.threads[t], Th::Parked(op) if enabled(s, op));
    let moves = |t: usize| can(t) && !s.yielded.contains(&(t as u32)) && !s.spin.get(t).is_some_and(|sp| sp.spinning(&s.writes));
    let last = s.last as usize;
    let next = if last < s.threads.len() && moves(last) {
        Some(last)
    } else {
        // When every thread that can run has yielded (or spins), the next one after the last
        // runner, in turn: two threads that yield while each waits for the other both get it.
        let n = s.threads.len();
        (0..n).find(|&t| moves(t)).or_else(|| (1..=n).map(|i| (last + i) % n.max(1)).find(|&t| t < n && can(t)))
    };
    match next {
        Some(t) => {
            s.turn = Some(t as u32);
            s.last = t as u32;
            s.yielded.remove(&(t as u32));
        }
        // A thread in a signal handler may yet make others move: no verdict while one is.
        None if (0..s.threads.len()).any(away) || s.threads.contains(&Th::Asleep) => {}
        None if s.threads.iter().any(|t| matches!(t, Th::Parked(_))) => {
            let waits: Vec<String> = s.threads.iter().enumerate().filter_map(|(t, th)| match th {
                Th::Parked(Op::Lock(m)) => Some(format!("T{t} waits for mutex {m:#x}")),
                Th::Parked(Op::Join(_)) => Some(format!("T{t} waits to join a live thread")),
                _ => None,
            }).collect();
            eprintln!("irs-runtime: serialised run deadlocked: {}; aborting (the plain program would hang here)", waits.join(", "));
            std::process::abort();
        }
        None => {}
    }
}

/// Before the calling thread's next event: park with `op` until it is this thread's turn and
/// `op` is enabled; then it runs (and keeps the turn while its next events are enabled).
pub fn acquire(op: Op) {
    if crate::thread::signal_state::inside() {
        return;
    }
    let Some(me) = sid() else { return };
    note_other();
    let mut s = state();
    // Keep the turn, unless it would only repeat a loop's iteration (then another thread that
    // can move gets it, if there is one: `decide`).
    let spinning = s.spin.get(me as usize).is_some_and(|sp| sp.spinning(&s.writes));
    if s.turn == Some(me) && enabled(&s, op) && !spinning && !s.yielded.contains(&me) {
        return;
    }
    s.threads[me as usize] = Th::Parked(op);
    if s.turn == Some(me) {
        s.turn = None;
    }
    decide(&mut s);
    notify();
    while s.turn != Some(me) {
        // SeqCst: see `notify`.
        let seen = CHANGED.load(Ordering::SeqCst);
        drop(s);
        crate::sync::futex::wait(&CHANGED, seen, REDECIDE);
        s = state();
        decide(&mut s);
    }
    s.threads[me as usize] = Th::Between;
}

/// The calling thread sleeps (`sleep`, `usleep`, `nanosleep`): it asks to let the others run,
/// as the OS would while it sleeps. It parks, and gets the turn back only when no other thread
/// can move (then it sleeps at its turn). A thread that polls with a sleep until other threads
/// have done something (a pool's `destroy`) would otherwise keep the turn for good.
pub fn yield_turn() {
    if !mine() {
        return;
    }
    let Some(me) = sid() else { return };
    state().yielded.insert(me);
    acquire(Op::Step);
}

/// The calling thread is about to sleep for real (after `yield_turn`): it gives the turn up and
/// is not waited for while it sleeps, as the OS runs other threads meanwhile (a pool's worker
/// that wakes from its pause must be able to take a job while `main` sleeps); when the guard is
/// dropped it is back between events, and a decision waits for it to reach its next one.
pub fn asleep() -> Option<Asleep> {
    if !mine() {
        return None;
    }
    let me = sid()?;
    let mut s = state();
    s.threads[me as usize] = Th::Asleep;
    if s.turn == Some(me) {
        s.turn = None;
    }
    decide(&mut s);
    drop(s);
    notify();
    Some(Asleep(me))
}

/// A thread in a real sleep (see [`asleep`]).
pub struct Asleep(u32);

impl Drop for Asleep {
    fn drop(&mut self) {
        let mut s = state();
        if let Some(th) = s.threads.get_mut(self.0 as usize) {
            *th = Th::Between;
        }
    }
}

/// `m` is held: locked by the calling thread, or found held by a lock that began before the run
/// was serialised (the caller then parks on it).
pub fn locked(m: usize) {
    state().locked.insert(m);
}

pub fn unlocked(m: usize) {
    state().locked.remove(&m);
}

/// The calling thread ends (its start routine returned, or it called `pthread_exit`).
pub fn thread_exited(handle: u64) {
    if !on() {
        return;
    }
    let mut s = state();
    s.exited.insert(handle);
    if let Some(me) = sid() {
        s.threads[me as usize] = Th::Exited;
        // Nothing of it is kept: its id serves the next thread created (`creating`).
        if let Some(sp) = s.spin.get_mut(me as usize) {
            *sp = ThreadSpin::default();
        }
        s.yielded.remove(&me);
        SID.with(|c| c.set(Some(GONE)));
        if s.turn == Some(me) {
            s.turn = None;
        }
        decide(&mut s);
    }
    notify();
}

thread_local! {
    /// The access the calling thread announced (`note_access`) and has not completed.
    static ACCESS: Cell<Option<(u64, u64, AccessKind, u32)>> = const { Cell::new(None) };
}

/// A serialised thread is about to access memory (from `__irs_before`): what it reads or writes
/// feeds the spin-loop watch (`spin_watch`).
pub fn note_access(site: u64, addr: u64, kind: AccessKind, size: u32) {
    if mine() {
        ACCESS.with(|a| a.set(Some((site, addr, kind, size))));
    }
}

/// The access announced by `note_access` is done (from `__irs_after`).
pub fn access_done() {
    let Some((site, addr, kind, size)) = ACCESS.with(|a| a.take()) else { return };
    let Some(me) = sid() else { return };
    let mut s = state();
    if kind.writes() {
        s.writes.wrote(addr, size);
    }
    observe(&mut s, me, EventKind::Access(kind), Some(site), addr, size);
}

/// Thread `me` performed an operation (`ThreadSpin::observe`).
fn observe(s: &mut State, me: u32, kind: EventKind, site: Option<u64>, addr: u64, size: u32) {
    let i = me as usize;
    if s.spin.len() <= i {
        s.spin.resize_with(i + 1, ThreadSpin::default);
    }
    s.spin[i].observe(kind, site, addr, size, &s.writes);
}

fn spin_of(s: &mut State, me: u32) -> Option<&mut ThreadSpin> {
    let i = me as usize;
    if s.spin.len() <= i {
        s.spin.resize_with(i + 1, ThreadSpin::default);
    }
    s.spin.get_mut(i)
}

/// Any other operation of a serialised thread (a lock, a create, ...): not a pure iteration.
fn note_other() {
    if ACCESS.with(|a| a.get().is_some()) {
        return;
    }
    if let Some(me) = sid() {
        let mut s = state();
        observe(&mut s, me, EventKind::Create, None, 0, 0);
    }
}

/// A serialised thread is at the top of a watched loop's header (`__irs_loop_head`).
pub fn loop_head(site: u64) {
    let Some(me) = sid().filter(|_| on()) else { return };
    let mut s = state();
    let s = &mut *s;
    if s.spin.len() <= me as usize {
        s.spin.resize_with(me as usize + 1, ThreadSpin::default);
    }
    s.spin[me as usize].head(site, &mut s.writes);
}

/// A serialised thread enters a watched loop from outside (`__irs_loop_enter`).
pub fn loop_enter() {
    let Some(me) = sid().filter(|_| on()) else { return };
    let mut s = state();
    if let Some(sp) = spin_of(&mut s, me) {
        sp.enter();
    }
}
