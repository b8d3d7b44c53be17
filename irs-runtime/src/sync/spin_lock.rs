//! Spin locks (DESIGN §3): `pthread_spin_lock`, `_trylock` and `_unlock` are a mutex's lock,
//! trylock and unlock (events on the lock's address, in every mode), so that a thread spinning
//! for one is a thread waiting for a mutex: enabled when the lock is free, a deadlock when it
//! never will be. Past its cut, a thread's operation on one waits only for the prefix's
//! operations on the same lock, as a mutex operation does (`enforcer`'s rule 2).

use crate::enforce::enforcer::Touch;
use crate::enforce::event::{enforced_touching, recording};
use crate::mode::{explore, plain};
use crate::record::recorder;
use crate::explore::scheduler;
use crate::enforce::serial::{self, Op};
use shared_proto::{EventKind, ObjectRef, SiteId};
use std::ffi::c_int;

fn record(site: u64, kind: EventKind, s: *mut libc::pthread_spinlock_t) {
    recorder::lock().push(Some(SiteId(site)), kind, ObjectRef::Mutex { addr: s as u64, logical: None });
}

/// # Safety
/// Same contract as `pthread_spin_lock`.
#[no_mangle]
pub unsafe extern "C" fn __irs_pthread_spin_lock(s: *mut libc::pthread_spinlock_t, site: u64) -> c_int {
    if explore() {
        return scheduler::lock_kind(s as u64, site, 0);
    }
    if plain() {
        // SAFETY: forwarded unchanged.
        return unsafe { libc::pthread_spin_lock(s) };
    }
    if serial::mine() {
        loop {
            serial::acquire(Op::Lock(s as usize));
            // SAFETY: the caller's lock; trylock never blocks.
            let rc = unsafe { libc::pthread_spin_trylock(s) };
            serial::locked(s as usize);
            if rc == 0 {
                if recording() {
                    record(site, EventKind::Lock, s);
                }
                return 0;
            }
        }
    }
    enforced_touching(site, Some(Touch::Mutex(s as u64)), || {
        // SAFETY: forwarded unchanged.
        let rc = unsafe { libc::pthread_spin_lock(s) };
        if rc == 0 && recording() {
            record(site, EventKind::Lock, s);
        }
        rc
    })
}

/// # Safety
/// Same contract as `pthread_spin_trylock`.
#[no_mangle]
pub unsafe extern "C" fn __irs_pthread_spin_trylock(s: *mut libc::pthread_spinlock_t, site: u64) -> c_int {
    if explore() {
        return scheduler::trylock_kind(s as u64, site, 0);
    }
    if plain() {
        // SAFETY: forwarded unchanged.
        return unsafe { libc::pthread_spin_trylock(s) };
    }
    enforced_touching(site, Some(Touch::Mutex(s as u64)), || {
        let mut rc = 0;
        let attempt = || {
            // SAFETY: forwarded unchanged; never blocks.
            rc = unsafe { libc::pthread_spin_trylock(s) };
            rc == 0
        };
        // Recorded under the recorder's lock, after the lock it met (`try_recorded`).
        crate::record::recorder::try_recorded(Some(SiteId(site)), s as u64, attempt);
        if rc == 0 && serial::mine() {
            serial::locked(s as usize);
        }
        rc
    })
}

/// # Safety
/// Same contract as `pthread_spin_unlock`.
#[no_mangle]
pub unsafe extern "C" fn __irs_pthread_spin_unlock(s: *mut libc::pthread_spinlock_t, site: u64) -> c_int {
    if explore() {
        return scheduler::unlock_kind(s as u64, site, 0);
    }
    if plain() {
        // SAFETY: forwarded unchanged.
        return unsafe { libc::pthread_spin_unlock(s) };
    }
    enforced_touching(site, Some(Touch::Mutex(s as u64)), || {
        let rec = recording().then(recorder::lock);
        // SAFETY: forwarded unchanged.
        let rc = unsafe { libc::pthread_spin_unlock(s) };
        if serial::on() {
            serial::unlocked(s as usize);
        }
        if let Some(mut r) = rec {
            r.push(Some(SiteId(site)), EventKind::Unlock, ObjectRef::Mutex { addr: s as u64, logical: None });
        }
        rc
    })
}
