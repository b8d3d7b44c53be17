//! Mutexes under the scheduler (DESIGN §7): lock, trylock and unlock by the mutex's type
//! (normal, recursive, error-checking; see `sync::mutex_kind`), the re-initialisation of a held
//! mutex, and the internal objects of the other primitives (their gates,
//! `shared_proto::sync_object`), locked and unlocked as mutexes. Who holds what is the
//! scheduler's `owners`; a recursive mutex's locks beyond the first are counted with no event.
//!
//! It must never block the OS thread: a lock waits only as a pending operation, which the
//! decision grants once the mutex is free.

use super::decision::{done, grant_op};
use super::threads::violation;
use super::{current, with};
use crate::sync::mutex_kind;
use shared_proto::{sync_object, EventKind, SiteId, ViolationKind};
use std::ffi::c_int;

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

/// Wait to perform a mutex operation; the mutex is named by its logical address as well.
fn mutex_op(kind: EventKind, m: u64, site: u64) {
    let logical = with(|s| s.logical_mutex(m));
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
    // Whether the caller holds it is asked again once the unlock is granted: other threads ran
    // in between (a free of the mutex's block among them).
    let owned = with(|s| s.owner(m) == Some(s.current as u32));
    with(|s| s.owners.retain(|&(x, _)| x != m));
    done();
    if !owned && sync_object::decode(m).is_none() {
        // Unlocking a mutex one does not hold is undefined behaviour: a bug worth reporting,
        // after the unlock's event (which it is, in the trace: the outcome is that trace's).
        let message = match with(|s| super::memory::freed_block(s, m)) {
            Some((block, at)) => format!("T{} unlocks mutex {at} in a heap block T{} freed (a use after free)", current(), block.by),
            None => format!("T{} unlocks mutex {}, which it does not hold", current(), with(|s| s.logical(m))),
        };
        violation(ViolationKind::Abort, &message);
    }
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
