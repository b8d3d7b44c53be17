//! The operations irs builds condition variables, semaphores, barriers, rwlocks and
//! `pthread_once` from (DESIGN §3; `shared_proto::sync_object`): lock, unlock, trylock and timed
//! lock of a program's mutex or of an internal object, and a choice. Each is one event, in
//! every mode the same:
//! - EXPLORE: the controlled scheduler's mutex operations (an internal object is a mutex named
//!   after the primitive's logical address) and its choices (`EventKind::Nondet`);
//! - ENFORCE, RECORD, chaos: the program's mutex through its wrappers, an internal object
//!   through a runtime lock (`rt_lock`), each inside its event's rules and recording, and in a
//!   serialised run at its turn; a choice takes the first value, as the verifier's first
//!   execution does (its prefixes are prefixes of that execution).
//!
//! The algorithms above this layer never look at the mode.

use crate::enforce::event::{enforced, recording};
use crate::mode::{enforcing, explore};
use crate::record::recorder;
use crate::sync::rt_lock;
use crate::explore::scheduler;
use crate::enforce::serial::{self, Op};
use shared_proto::{sync_object, EventKind, ObjectRef, SiteId};
use std::ffi::{c_int, c_void};
use std::time::Duration;

/// What an operation acts on.
#[derive(Clone, Copy, Debug)]
pub enum Obj {
    /// The program's own mutex (a condition variable's).
    Mutex(*mut libc::pthread_mutex_t),
    /// An internal object, by name (see `shared_proto::sync_object`).
    Internal(u64),
}

/// The internal object `tag` of the primitive at `base`.
pub fn internal(base: *const c_void, tag: u16) -> Obj {
    Obj::Internal(sync_object::sub(base as u64, tag))
}

/// A number for the calling thread, to tell threads apart in waiter lists and holders (never to
/// name an object: it depends on the order of creations): its id in EXPLORE; elsewhere a number
/// given to each OS thread on first use.
pub fn me() -> u32 {
    if explore() {
        return scheduler::current();
    }
    use std::sync::atomic::{AtomicU32, Ordering};
    static NEXT: AtomicU32 = AtomicU32::new(0);
    thread_local! { static ID: std::cell::Cell<Option<u32>> = const { std::cell::Cell::new(None) }; }
    ID.with(|c| match c.get() {
        Some(id) => id,
        None => {
            // Relaxed: only uniqueness matters.
            let id = NEXT.fetch_add(1, Ordering::Relaxed);
            c.set(Some(id));
            id
        }
    })
}

/// Outside EXPLORE, the name of the gate of the thread numbered `who` (`me`).
fn own_gate(who: u32) -> u64 {
    sync_object::sub(who as u64, 0x7fff)
}

/// Forgets the calling thread's gate when the thread ends (a thread-local's destructor, run
/// after its start routine and its keys' destructors), so that a program whose threads come
/// and go keeps no state of the ended ones.
struct GateOwner(std::cell::Cell<Option<u32>>);

impl Drop for GateOwner {
    fn drop(&mut self) {
        if let Some(who) = self.0.get() {
            rt_lock::forget(own_gate(who));
        }
    }
}

thread_local! { static GATE_OWNER: GateOwner = const { GateOwner(std::cell::Cell::new(None)) }; }

/// The gate of waiter `who` (`me`), slot `slot`, in the condition variable `space` of the
/// primitive at `base`: the lock a waiter blocks on until it is woken. In EXPLORE the gate is
/// named logically, by its slot (one per thread that waits there, numbered by the order of
/// their first waits, see `condvar`; at most 64 threads); elsewhere names need only be apart
/// within the run, and a gate is the waiting OS thread's own (a thread waits on one thing at a
/// time), so that a program whose threads come and go does not run out of slots.
pub fn gate(base: *const c_void, space: sync_object::CondSpace, slot: u16, who: u32) -> Obj {
    if explore() {
        internal(base, space.gate_base + slot.min(0xff))
    } else {
        if who == me() {
            // The waiter itself (a waker names the gates of others): forgotten at its end. A
            // wait in a thread-local's destructor, after this one ran, keeps its gate.
            let _ = GATE_OWNER.try_with(|g| g.0.set(Some(who)));
        }
        Obj::Internal(own_gate(who))
    }
}

/// The internal object `name` is gone with its primitive (destroyed): outside EXPLORE, its
/// runtime lock is forgotten (in EXPLORE the scheduler's objects live as long as the execution).
pub fn forget(name: u64) {
    if !explore() {
        rt_lock::forget(name);
    }
}

fn record(site: u64, kind: EventKind, name: u64) {
    recorder::lock().push(Some(SiteId(site)), kind, ObjectRef::Mutex { addr: name, logical: None });
}

/// Lock `o`, waiting as long as it takes.
pub fn lock(o: Obj, site: u64) {
    match o {
        Obj::Mutex(m) if explore() => {
            scheduler::lock(m as u64, site);
        }
        Obj::Mutex(m) => {
            // SAFETY: the program's mutex, passed to the primitive by the program.
            unsafe { crate::sync::mutex::__irs_pthread_mutex_lock(m, site) };
        }
        Obj::Internal(name) if explore() => {
            scheduler::lock_kind(name, site, 0);
        }
        Obj::Internal(name) => {
            let l = rt_lock::of(name);
            if serial::mine() {
                // At its turn with the lock free; one taken before the run was serialised is
                // found held, and waited for like any other.
                loop {
                    serial::acquire(Op::Lock(name as usize));
                    let got = l.try_acquire();
                    serial::locked(name as usize);
                    if got {
                        if recording() {
                            record(site, EventKind::Lock, name);
                        }
                        return;
                    }
                }
            }
            enforced(site, || {
                l.acquire();
                if recording() {
                    record(site, EventKind::Lock, name);
                }
            })
        }
    }
}

/// Unlock `o` (an internal object: whoever took it, a gate is released by its waker).
pub fn unlock(o: Obj, site: u64) {
    match o {
        Obj::Mutex(m) if explore() => {
            scheduler::unlock(m as u64, site);
        }
        Obj::Mutex(m) => {
            // SAFETY: the program's mutex, passed to the primitive by the program.
            unsafe { crate::sync::mutex::__irs_pthread_mutex_unlock(m, site) };
        }
        Obj::Internal(name) if explore() => {
            scheduler::unlock_kind(name, site, 0);
        }
        Obj::Internal(name) => enforced(site, || {
            // Recording: released under the recorder's lock, so no later lock precedes it there.
            let rec = recording().then(recorder::lock);
            rt_lock::of(name).release();
            if serial::on() {
                serial::unlocked(name as usize);
            }
            if let Some(mut r) = rec {
                r.push(Some(SiteId(site)), EventKind::Unlock, ObjectRef::Mutex { addr: name, logical: None });
            }
        }),
    }
}

/// Lock the internal object `o` if it is free now (EXPLORE: wherever the exploration puts the
/// attempt) or, with `limit`, becomes free within it (outside EXPLORE; a timed wait, whose
/// timing EXPLORE does not model: a timeout may come at any moment, so a timed lock is a
/// trylock there). Returns whether it was taken.
pub fn trylock(o: Obj, site: u64, limit: Option<Duration>) -> bool {
    let Obj::Internal(name) = o else { unreachable!("only internal objects are tried") };
    if explore() {
        return scheduler::trylock_kind(name, site, 0) == 0;
    }
    let l = rt_lock::of(name);
    if serial::mine() {
        // Serialised: tried at its turn, without waiting (deterministic).
        serial::acquire(Op::Step);
        let got = l.try_acquire();
        if got {
            serial::locked(name as usize);
        }
        if recording() {
            record(site, if got { EventKind::TryLock } else { EventKind::TryLockFail }, name);
        }
        return got;
    }
    enforced(site, || match limit {
        // Recorded under the recorder's lock, after the lock it met (`try_recorded`).
        None => recorder::try_recorded(Some(SiteId(site)), name, || l.try_acquire()),
        Some(d) => {
            // A timed one waits off the recorder's lock: recorded when it returns.
            let got = l.acquire_within(Some(d));
            if recording() {
                record(site, if got { EventKind::TryLock } else { EventKind::TryLockFail }, name);
            }
            got
        }
    })
}

/// Choose one of `of` (> 1) possibilities: which waiter a signal wakes. EXPLORE explores each;
/// ENFORCE inside the prefix takes the verified trace's value (`enforcer::trace_choice`);
/// elsewhere the first, as the verifier's default policy takes it.
pub fn choose(site: u64, of: u32) -> u32 {
    if explore() {
        return scheduler::nondet(site, of);
    }
    // (Serialised: `enforced` waits for the turn.)
    enforced(site, || {
        let value = if enforcing() { crate::enforce::enforcer::trace_choice(of).unwrap_or(0) } else { 0 };
        if recording() {
            recorder::lock().push(Some(SiteId(site)), EventKind::Nondet, ObjectRef::Choice { value, of });
        }
        value
    })
}

/// What is left of `abstime` on `clock` (an absolute deadline of a timed wait), or `None` for
/// no deadline; `Err(EINVAL)` for an invalid one.
pub fn time_left(clock: libc::clockid_t, abstime: *const libc::timespec) -> Result<Option<Duration>, c_int> {
    if abstime.is_null() {
        return Ok(None);
    }
    // SAFETY: the caller's deadline (the timed functions' contract).
    let t = unsafe { *abstime };
    if !(0..1_000_000_000).contains(&t.tv_nsec) {
        return Err(libc::EINVAL);
    }
    let mut now = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: clock_gettime fills `now`.
    unsafe { libc::clock_gettime(clock, &mut now) };
    let ns = |ts: libc::timespec| ts.tv_sec as i128 * 1_000_000_000 + ts.tv_nsec as i128;
    let left = (ns(t) - ns(now)).max(0);
    Ok(Some(Duration::from_nanos(left.min(u64::MAX as i128) as u64)))
}
