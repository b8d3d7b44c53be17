//! Condition variables (DESIGN §3 "Objects and dependence"), built from locks and a choice
//! (`sync_ops`), the same in every mode, so that what the verifier explores is what production runs
//! do:
//!
//! - `wait(c, m)`: lock `c`'s waiter list, take the caller's *gate* (free: it was left free),
//!   join the list, unlock the list, unlock `m`; then lock the gate again, which waits until a
//!   signal releases it; release the gate (free for next time); lock `m`. The caller is on the
//!   list before it unlocks `m`, so a signal sent by a thread that locks `m` after it cannot be
//!   lost: the atomicity POSIX asks of `pthread_cond_wait`. (The internal condition variables
//!   of semaphores, barriers and rwlocks need no list lock: their primitive's lock, held around
//!   every wait and wake, guards the list.)
//! - `signal(c)`: lock the list; with waiters, choose one (a choice the exploration explores,
//!   one value per waiter: POSIX leaves open which one wakes), take it off the list and release
//!   its gate; unlock the list. With none, the signal is lost.
//! - `broadcast(c)`: the same for every waiter.
//! - `timedwait`: the second lock of the gate is tried (EXPLORE: a timeout may come at any
//!   moment, so the wait times out wherever the exploration puts it before a signal; elsewhere
//!   it waits until the deadline). Timed out, the waiter locks the list: still on it, it leaves
//!   (`ETIMEDOUT`); taken off by a signal meanwhile, it takes its gate, which that signal
//!   released, and returns 0.
//!
//! No spurious wake-up is explored unless asked (`irs verify --spurious-wake-ups`: an untimed
//! wait's second lock of its gate is tried then, as a timed wait's is, and a failed try returns
//! 0): otherwise a waiter returns only when signalled, or timed out, and a lost wake-up is a
//! deadlock, reported with the waiters and the condition variable each waits on. Outside
//! EXPLORE a wait never wakes spuriously. The same algorithm, over internal condition variables, makes semaphores, barriers and
//! rwlocks wait (their `CondSpace`).

use crate::sync::sync_ops::{self, Obj};
use crate::sync::object_table::ObjectTable;
use parking_lot::Mutex;
use shared_proto::sync_object::{CondSpace, PROGRAM_COND};
use std::ffi::{c_int, c_void};
use std::time::Duration;

/// One condition variable's state. Read and changed only by a thread holding the condition
/// variable's list lock (an event; or, for an internal one, its primitive's lock), so the Rust
/// lock around it is never contended.
#[derive(Default)]
struct Waiters {
    /// Who waits, oldest first: a thread's number (`sync_ops::me`) and its gate.
    list: Vec<(u32, u16)>,
    /// In EXPLORE, the gate of each thread that has waited here, by the order of their first
    /// waits: a gate's name must be a function of the execution's events (the order of the
    /// waits, which the list lock orders), never of a thread's number, which depends on the
    /// order in which unrelated threads created their threads (found by the differential
    /// campaign).
    gates: Vec<u32>,
}

impl Waiters {
    fn gate_of(&mut self, me: u32) -> u16 {
        let i = self.gates.iter().position(|&t| t == me).unwrap_or_else(|| {
            self.gates.push(me);
            self.gates.len() - 1
        });
        i as u16
    }
}

/// Each condition variable's waiters, by the name of its list lock (the Rust lock is never
/// contended: see `Waiters`).
static WAITERS: ObjectTable<Mutex<Waiters>> = ObjectTable::new();

fn with_waiters<R>(base: *const c_void, space: CondSpace, f: impl FnOnce(&mut Waiters) -> R) -> R {
    f(&mut WAITERS.get(shared_proto::sync_object::sub(base as u64, space.lock)).lock())
}

/// How long a timed wait may wait: `None` for an untimed one.
pub type Limit = Option<Option<Duration>>;

/// `irs verify --spurious-wake-ups`. Relaxed: set once by [`prepare`], before the first
/// execution.
static SPURIOUS: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// Read `--spurious-wake-ups` (EXPLORE, before the first execution).
pub fn prepare() {
    SPURIOUS.store(std::env::var_os(shared_proto::explore_protocol::ENV_SPURIOUS_WAKE_UPS).is_some(), std::sync::atomic::Ordering::Relaxed);
}

/// Wait on the condition variable `space` of `base`, releasing `m` meanwhile; `limit`: a timed
/// wait's time left (`Some(None)`: no deadline after all). Returns 0 or `ETIMEDOUT`; `m` is
/// held again either way.
pub fn wait(base: *const c_void, space: CondSpace, m: Obj, site: u64, limit: Limit) -> c_int {
    // A program's condition variable has a lock on its list (a signaller need not hold `m`);
    // an internal one is waited on and signalled only under its primitive's lock, `m`, which
    // guards the list then (fewer events, the same behaviours).
    let list = (space == PROGRAM_COND).then(|| sync_ops::internal(base, space.lock));
    // Until `m` is released, the program's signal handlers wait (they run right after, while
    // the caller waits on its gate): in the C library, a handler almost never finds the caller
    // still holding `m` (a few instructions), and a handler that waits for another thread (a
    // pool's pause) while its thread holds `m` would hang whoever locks `m` next. Here the steps
    // before the release can take long (a serialised run's turn, chaos's delays).
    let masked = (space == PROGRAM_COND).then(crate::thread::signal_state::Masked::new);
    let me = sync_ops::me();
    if let Some(l) = list {
        sync_ops::lock(l, site);
    }
    let slot = if crate::mode::explore() { with_waiters(base, space, |w| w.gate_of(me)) } else { 0 };
    let gate = sync_ops::gate(base, space, slot, me);
    sync_ops::lock(gate, site);
    with_waiters(base, space, |w| w.list.push((me, slot)));
    if let Some(l) = list {
        sync_ops::unlock(l, site);
    }
    sync_ops::unlock(m, site);
    drop(masked);
    // A spurious wake-up is explored as a timeout is: a try of the gate, which fails wherever
    // the exploration puts it before the signal that releases the gate.
    let spurious = limit.is_none() && list.is_some() && crate::mode::explore() && SPURIOUS.load(std::sync::atomic::Ordering::Relaxed);
    let woken = match limit {
        None if !spurious => {
            sync_ops::lock(gate, site);
            true
        }
        None => sync_ops::trylock(gate, site, None),
        Some(left) => sync_ops::trylock(gate, site, left.or(Some(Duration::MAX))),
    };
    if woken {
        // Left free for the next wait.
        sync_ops::unlock(gate, site);
        sync_ops::lock(m, site);
        return 0;
    }
    // Timed out: off the list, unless a signal took it off meanwhile (and released the gate).
    sync_ops::lock(list.unwrap_or(m), site);
    let still_waiting = with_waiters(base, space, |w| match w.list.iter().position(|&(x, _)| x == me) {
        Some(i) => {
            w.list.remove(i);
            true
        }
        None => false,
    });
    if !still_waiting {
        sync_ops::lock(gate, site);
    }
    if let Some(l) = list {
        sync_ops::unlock(l, site);
    }
    sync_ops::unlock(gate, site);
    if list.is_some() {
        sync_ops::lock(m, site);
    }
    if still_waiting && !spurious { libc::ETIMEDOUT } else { 0 }
}

/// Wake one waiter (a choice among them), or every one. With none it does nothing, and an
/// internal condition variable (no list lock) makes no event then.
pub fn wake(base: *const c_void, space: CondSpace, site: u64, all: bool) {
    let list = (space == PROGRAM_COND).then(|| sync_ops::internal(base, space.lock));
    if let Some(l) = list {
        sync_ops::lock(l, site);
    }
    let n = with_waiters(base, space, |w| w.list.len());
    let woken: Vec<(u32, u16)> = if n == 0 {
        Vec::new()
    } else if all {
        with_waiters(base, space, |w| std::mem::take(&mut w.list))
    } else {
        let i = if n > 1 { sync_ops::choose(site, n as u32) as usize } else { 0 };
        vec![with_waiters(base, space, |w| w.list.remove(i.min(w.list.len() - 1)))]
    };
    for (who, slot) in woken {
        sync_ops::unlock(sync_ops::gate(base, space, slot, who), site);
    }
    if let Some(l) = list {
        sync_ops::unlock(l, site);
    }
}

/// Forget a condition variable's waiters and its list's lock (`pthread_cond_init` and
/// `_destroy`, and those of the primitives with an internal one): the runtime keeps nothing of
/// a destroyed object.
pub fn reset(base: *const c_void, space: CondSpace) {
    let name = shared_proto::sync_object::sub(base as u64, space.lock);
    WAITERS.forget(name);
    if space == PROGRAM_COND {
        sync_ops::forget(name);
    }
}

// ---- the C functions ---------------------------------------------------------------------

use crate::mode::plain;

/// # Safety
/// Same contract as `pthread_cond_wait`.
#[no_mangle]
pub unsafe extern "C" fn __irs_pthread_cond_wait(c: *mut libc::pthread_cond_t, m: *mut libc::pthread_mutex_t, site: u64) -> c_int {
    if plain() {
        // SAFETY: forwarded unchanged.
        return unsafe { libc::pthread_cond_wait(c, m) };
    }
    wait(c as *const c_void, PROGRAM_COND, Obj::Mutex(m), site, None)
}

/// The clock a condition variable's deadlines are on (`pthread_condattr_setclock`), as
/// `pthread_cond_init` left it in the condition variable: glibc 2.25+ keeps it in bit 1 of
/// `__data.__wrefs` (offset 36; 1: `CLOCK_MONOTONIC`), where its own `pthread_cond_timedwait`
/// reads it.
fn cond_clock(c: *const libc::pthread_cond_t) -> libc::clockid_t {
    // SAFETY: the program's condition variable (48 bytes); a volatile read of an int inside it.
    let wrefs = unsafe { std::ptr::read_volatile((c as *const u8).add(36) as *const u32) };
    if wrefs & 2 != 0 { libc::CLOCK_MONOTONIC } else { libc::CLOCK_REALTIME }
}

fn timed(c: *mut libc::pthread_cond_t, m: *mut libc::pthread_mutex_t, clock: libc::clockid_t, abstime: *const libc::timespec, site: u64) -> c_int {
    match sync_ops::time_left(clock, abstime) {
        Err(e) => e,
        Ok(left) => wait(c as *const c_void, PROGRAM_COND, Obj::Mutex(m), site, Some(left)),
    }
}

/// # Safety
/// Same contract as `pthread_cond_timedwait`.
#[no_mangle]
pub unsafe extern "C" fn __irs_pthread_cond_timedwait(c: *mut libc::pthread_cond_t, m: *mut libc::pthread_mutex_t, abstime: *const libc::timespec, site: u64) -> c_int {
    if plain() {
        // SAFETY: forwarded unchanged.
        return unsafe { libc::pthread_cond_timedwait(c, m, abstime) };
    }
    timed(c, m, cond_clock(c), abstime, site)
}

extern "C" {
    fn pthread_cond_clockwait(c: *mut libc::pthread_cond_t, m: *mut libc::pthread_mutex_t, clock: libc::clockid_t, abstime: *const libc::timespec) -> c_int;
}

/// # Safety
/// Same contract as `pthread_cond_clockwait`.
#[no_mangle]
pub unsafe extern "C" fn __irs_pthread_cond_clockwait(c: *mut libc::pthread_cond_t, m: *mut libc::pthread_mutex_t, clock: libc::clockid_t, abstime: *const libc::timespec, site: u64) -> c_int {
    if plain() {
        // SAFETY: forwarded unchanged.
        return unsafe { pthread_cond_clockwait(c, m, clock, abstime) };
    }
    timed(c, m, clock, abstime, site)
}

/// # Safety
/// Same contract as `pthread_cond_signal`.
#[no_mangle]
pub unsafe extern "C" fn __irs_pthread_cond_signal(c: *mut libc::pthread_cond_t, site: u64) -> c_int {
    if plain() {
        // SAFETY: forwarded unchanged.
        return unsafe { libc::pthread_cond_signal(c) };
    }
    wake(c as *const c_void, PROGRAM_COND, site, false);
    0
}

/// # Safety
/// Same contract as `pthread_cond_broadcast`.
#[no_mangle]
pub unsafe extern "C" fn __irs_pthread_cond_broadcast(c: *mut libc::pthread_cond_t, site: u64) -> c_int {
    if plain() {
        // SAFETY: forwarded unchanged.
        return unsafe { libc::pthread_cond_broadcast(c) };
    }
    wake(c as *const c_void, PROGRAM_COND, site, true);
    0
}

/// # Safety
/// Same contract as `pthread_cond_init`.
#[no_mangle]
pub unsafe extern "C" fn __irs_pthread_cond_init(c: *mut libc::pthread_cond_t, attr: *const libc::pthread_condattr_t, _site: u64) -> c_int {
    if !plain() {
        reset(c as *const c_void, PROGRAM_COND);
    }
    // SAFETY: forwarded unchanged (the clock attribute is read from it by `cond_clock`).
    unsafe { libc::pthread_cond_init(c, attr) }
}

/// # Safety
/// Same contract as `pthread_cond_destroy`.
#[no_mangle]
pub unsafe extern "C" fn __irs_pthread_cond_destroy(c: *mut libc::pthread_cond_t, _site: u64) -> c_int {
    if plain() {
        // SAFETY: forwarded unchanged.
        return unsafe { libc::pthread_cond_destroy(c) };
    }
    reset(c as *const c_void, PROGRAM_COND);
    0
}
