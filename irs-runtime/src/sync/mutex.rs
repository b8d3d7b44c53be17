//! Mutexes (DESIGN §3): the `pthread_mutex_*` functions the pass routes to the runtime, each
//! with the site id as an extra last argument. EXPLORE models them in the scheduler; RECORD and
//! ENFORCE call the C library's inside the event's rules and recording, a serialised run at its
//! turn; OFF and a run relaxed from its start (`enforce::relaxed`) only call the real function. Recursive and error-checking relocks and foreign
//! unlocks are no events (`mutex_kind`).

use crate::enforce::enforcer::Touch;
use crate::enforce::event::{enforced_touching, recording};
use crate::enforce::serial::{self, Op};
use crate::explore::scheduler;
use crate::mode::explore;
use crate::record::recorder;
use crate::sync::mutex_kind;
use shared_proto::{EventKind, ObjectRef, SiteId};
use std::ffi::c_int;

use crate::enforce::relaxed::forwarded;

/// # Safety
/// Same contract as `pthread_mutex_init`.
#[no_mangle]
pub unsafe extern "C" fn __irs_pthread_mutex_init(
    m: *mut libc::pthread_mutex_t,
    attr: *const libc::pthread_mutexattr_t,
    site: u64,
) -> c_int {
    // SAFETY: forwarded unchanged.
    let init = || unsafe { libc::pthread_mutex_init(m, attr) };
    if forwarded() {
        return init();
    }
    if explore() {
        // The real mutex is not used in EXPLORE (the scheduler models it).
        scheduler::mutex_reinit(m as u64, site);
        return init();
    }
    // A mutex destroyed while locked (glibc's destroy fails with `EBUSY` and leaves it locked)
    // and initialised again is a fresh, unlocked one. Held by the initialising thread, the init
    // releases it: an unlock event (as in EXPLORE), so that a recorded trace has it. (Whether
    // the caller holds it is read from what glibc keeps in it, its lock word and owner: memory
    // that was never a mutex holds neither the caller's thread id as its owner.)
    if !(mutex_kind::locked(m as u64) && mutex_kind::held_by_me(m as u64)) {
        if serial::on() {
            serial::unlocked(m as usize);
        }
        return init();
    }
    let release = || {
        let rec = recording().then(recorder::lock);
        let rc = init();
        if serial::on() {
            serial::unlocked(m as usize);
        }
        if let Some(mut r) = rec {
            r.push(Some(SiteId(site)), EventKind::Unlock, ObjectRef::Mutex { addr: m as u64, logical: None });
        }
        rc
    };
    if serial::mine() {
        serial::acquire(Op::Step);
        return release();
    }
    enforced_touching(site, Some(Touch::Mutex(m as u64)), release)
}

/// # Safety
/// Same contract as `pthread_mutex_lock`.
#[no_mangle]
pub unsafe extern "C" fn __irs_pthread_mutex_lock(m: *mut libc::pthread_mutex_t, site: u64) -> c_int {
    if forwarded() {
        // SAFETY: forwarded unchanged.
        return unsafe { libc::pthread_mutex_lock(m) };
    }
    lock(m, site)
}

#[inline(never)]
fn lock(m: *mut libc::pthread_mutex_t, site: u64) -> c_int {
    if explore() {
        return scheduler::lock(m as u64, site);
    }
    if no_event_relock(m) {
        // SAFETY: forwarded unchanged: a recursive relock, or an error-checking one (EDEADLK).
        return unsafe { libc::pthread_mutex_lock(m) };
    }
    if serial::mine() {
        return serial_lock(m, site);
    }
    enforced_touching(site, Some(Touch::Mutex(m as u64)), || {
        // SAFETY: forwarded unchanged. Blocks without holding the recorder lock.
        let rc = unsafe { libc::pthread_mutex_lock(m) };
        if rc == 0 && recording() {
            recorder::lock().push(Some(SiteId(site)), EventKind::Lock, ObjectRef::Mutex { addr: m as u64, logical: None });
        }
        rc
    })
}

/// A lock of a recursive or error-checking mutex by its owner: again (recursive) or `EDEADLK`,
/// nothing another thread can see, so no event (as in EXPLORE, `mutex_kind`).
fn no_event_relock(m: *mut libc::pthread_mutex_t) -> bool {
    mutex_kind::kind(m as u64) != mutex_kind::NORMAL && mutex_kind::held_by_me(m as u64)
}

/// An unlock that releases nothing another thread can see: of a recursive mutex locked more
/// than once, or of a recursive or error-checking one the caller does not hold (`EPERM`).
fn no_event_unlock(m: *mut libc::pthread_mutex_t) -> bool {
    let a = m as u64;
    match mutex_kind::kind(a) {
        mutex_kind::NORMAL => false,
        mutex_kind::RECURSIVE => !mutex_kind::held_by_me(a) || mutex_kind::depth(a) > 1,
        _ => !mutex_kind::held_by_me(a),
    }
}

/// A lock in a serialised run: it waits for its turn with the mutex free, then takes it without
/// blocking (a mutex locked before the run was serialised is found held: the thread waits for
/// its unlock like any other).
fn serial_lock(m: *mut libc::pthread_mutex_t, site: u64) -> c_int {
    loop {
        serial::acquire(Op::Lock(m as usize));
        // SAFETY: the caller's mutex; trylock never blocks.
        let rc = unsafe { libc::pthread_mutex_trylock(m) };
        if rc == libc::EBUSY {
            serial::locked(m as usize);
            continue;
        }
        if rc == 0 {
            serial::locked(m as usize);
            if recording() {
                recorder::lock().push(Some(SiteId(site)), EventKind::Lock, ObjectRef::Mutex { addr: m as u64, logical: None });
            }
        }
        return rc;
    }
}

/// # Safety
/// Same contract as `pthread_mutex_unlock`.
#[no_mangle]
pub unsafe extern "C" fn __irs_pthread_mutex_unlock(m: *mut libc::pthread_mutex_t, site: u64) -> c_int {
    if forwarded() {
        // SAFETY: forwarded unchanged.
        return unsafe { libc::pthread_mutex_unlock(m) };
    }
    unlock(m, site)
}

#[inline(never)]
fn unlock(m: *mut libc::pthread_mutex_t, site: u64) -> c_int {
    if explore() {
        return scheduler::unlock(m as u64, site);
    }
    if no_event_unlock(m) {
        // SAFETY: forwarded unchanged.
        return unsafe { libc::pthread_mutex_unlock(m) };
    }
    enforced_touching(site, Some(Touch::Mutex(m as u64)), || {
        // Recording: unlock under the recorder lock, so no later lock of `m` precedes it there.
        let rec = recording().then(recorder::lock);
        // SAFETY: forwarded unchanged; unlocking never blocks.
        let rc = unsafe { libc::pthread_mutex_unlock(m) };
        if rc == 0 && serial::mine() {
            serial::unlocked(m as usize);
        }
        if let (0, Some(mut r)) = (rc, rec) {
            r.push(Some(SiteId(site)), EventKind::Unlock, ObjectRef::Mutex { addr: m as u64, logical: None });
        }
        rc
    })
}

/// # Safety
/// Same contract as `pthread_mutex_trylock`.
#[no_mangle]
pub unsafe extern "C" fn __irs_pthread_mutex_trylock(m: *mut libc::pthread_mutex_t, site: u64) -> c_int {
    if forwarded() {
        // SAFETY: forwarded unchanged.
        return unsafe { libc::pthread_mutex_trylock(m) };
    }
    trylock(m, site)
}

#[inline(never)]
fn trylock(m: *mut libc::pthread_mutex_t, site: u64) -> c_int {
    if explore() {
        return scheduler::trylock(m as u64, site);
    }
    if mutex_kind::kind(m as u64) == mutex_kind::RECURSIVE && mutex_kind::held_by_me(m as u64) {
        // SAFETY: forwarded unchanged: a recursive relock.
        return unsafe { libc::pthread_mutex_trylock(m) };
    }
    enforced_touching(site, Some(Touch::Mutex(m as u64)), || {
        let mut rc = 0;
        let attempt = || {
            // SAFETY: forwarded unchanged; trylock never blocks.
            rc = unsafe { libc::pthread_mutex_trylock(m) };
            rc == 0
        };
        // Recorded under the recorder's lock, after the lock it met (`try_recorded`).
        recorder::try_recorded(Some(SiteId(site)), m as u64, attempt);
        if rc == 0 && serial::mine() {
            serial::locked(m as usize);
        }
        rc
    })
}

/// # Safety
/// Same contract as `pthread_mutex_timedlock`. The timeout is an outcome the exploration
/// explores, not real time: in EXPLORE a timed lock is a trylock (`ETIMEDOUT` for `EBUSY`): it
/// may time out wherever the mutex is held, and takes it wherever it is free (POSIX: never a
/// timeout when it can be locked at once).
#[no_mangle]
pub unsafe extern "C" fn __irs_pthread_mutex_timedlock(m: *mut libc::pthread_mutex_t, abstime: *const libc::timespec, site: u64) -> c_int {
    timedlock(m, libc::CLOCK_REALTIME, abstime, site)
}

extern "C" {
    fn pthread_mutex_clocklock(m: *mut libc::pthread_mutex_t, clock: libc::clockid_t, abstime: *const libc::timespec) -> c_int;
}

/// # Safety
/// Same contract as `pthread_mutex_clocklock` (as `pthread_mutex_timedlock`, on `clock`).
#[no_mangle]
pub unsafe extern "C" fn __irs_pthread_mutex_clocklock(m: *mut libc::pthread_mutex_t, clock: libc::clockid_t, abstime: *const libc::timespec, site: u64) -> c_int {
    timedlock(m, clock, abstime, site)
}

fn timedlock(m: *mut libc::pthread_mutex_t, clock: libc::clockid_t, abstime: *const libc::timespec, site: u64) -> c_int {
    let real = || {
        // SAFETY: the caller's arguments, forwarded.
        unsafe { pthread_mutex_clocklock(m, clock, abstime) }
    };
    if forwarded() {
        return real();
    }
    if explore() {
        return match scheduler::trylock(m as u64, site) {
            libc::EBUSY => libc::ETIMEDOUT,
            rc => rc,
        };
    }
    if no_event_relock(m) {
        return real();
    }
    if serial::mine() {
        // Serialised: tried at its turn (a deterministic outcome).
        // SAFETY: the caller's mutex; trylock never blocks.
        return match unsafe { __irs_pthread_mutex_trylock(m, site) } {
            libc::EBUSY => libc::ETIMEDOUT,
            rc => rc,
        };
    }
    enforced_touching(site, Some(Touch::Mutex(m as u64)), || {
        let rc = real();
        if rc == 0 && serial::mine() {
            serial::locked(m as usize);
        }
        if recording() {
            let kind = if rc == 0 { EventKind::TryLock } else { EventKind::TryLockFail };
            recorder::lock().push(Some(SiteId(site)), kind, ObjectRef::Mutex { addr: m as u64, logical: None });
        }
        rc
    })
}
