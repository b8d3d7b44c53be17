//! Semaphores (DESIGN §3 "Objects and dependence"): a count under the semaphore's internal lock,
//! and an internal condition variable (`condvar`, `SEM_COND`) its waiters wait on for a post; the
//! same in every mode but OFF. `sem_wait` waits while the count is 0, `sem_trywait` fails with
//! `EAGAIN`, `sem_timedwait` may time out wherever it would wait (EXPLORE: at any moment; elsewhere
//! at the deadline), `sem_post` adds one and wakes one waiter (a choice among them), `sem_getvalue`
//! reads the count. Each step on the count is an event on the internal lock, so the exploration
//! orders every two of them; a semaphore never posted is a deadlock, reported with the waiters.
//! Named semaphores (`sem_open`) are not modelled.

use crate::sync::condvar;
use crate::mode::plain;
use crate::sync::sync_ops::{self, Obj};
use crate::sync::object_table::ObjectTable;
use parking_lot::Mutex;
use shared_proto::sync_object::{SEM_COND, SEM_LOCK};
use std::ffi::{c_int, c_void};

/// Each semaphore's count, by address; read and changed under its internal lock only (the
/// Rust lock is never contended).
static COUNTS: ObjectTable<Mutex<u32>> = ObjectTable::new();

fn with_count<R>(s: *mut libc::sem_t, f: impl FnOnce(&mut u32) -> R) -> R {
    f(&mut COUNTS.get(s as u64).lock())
}

fn fail(e: c_int) -> c_int {
    // SAFETY: errno of this thread.
    unsafe { *libc::__errno_location() = e };
    -1
}

fn lock_of(s: *mut libc::sem_t) -> Obj {
    sync_ops::internal(s as *const c_void, SEM_LOCK)
}

/// Take one from the count, waiting while it is 0 (`limit`: a timed wait's time left).
fn take(s: *mut libc::sem_t, site: u64, limit: condvar::Limit) -> c_int {
    let l = lock_of(s);
    sync_ops::lock(l, site);
    loop {
        if with_count(s, |c| (*c > 0).then(|| *c -= 1)).is_some() {
            sync_ops::unlock(l, site);
            return 0;
        }
        let rc = condvar::wait(s as *const c_void, SEM_COND, l, site, limit);
        if rc == libc::ETIMEDOUT && with_count(s, |c| *c == 0) {
            sync_ops::unlock(l, site);
            return fail(libc::ETIMEDOUT);
        }
    }
}

/// # Safety
/// Same contract as `sem_init`.
#[no_mangle]
pub unsafe extern "C" fn __irs_sem_init(s: *mut libc::sem_t, pshared: c_int, value: u32, site: u64) -> c_int {
    if plain() {
        // SAFETY: forwarded unchanged.
        return unsafe { libc::sem_init(s, pshared, value) };
    }
    if value > i32::MAX as u32 {
        return fail(libc::EINVAL);
    }
    let l = lock_of(s);
    sync_ops::lock(l, site);
    with_count(s, |c| *c = value);
    condvar::reset(s as *const c_void, SEM_COND);
    sync_ops::unlock(l, site);
    0
}

/// # Safety
/// Same contract as `sem_destroy`.
#[no_mangle]
pub unsafe extern "C" fn __irs_sem_destroy(s: *mut libc::sem_t, _site: u64) -> c_int {
    if plain() {
        // SAFETY: forwarded unchanged.
        return unsafe { libc::sem_destroy(s) };
    }
    // No thread may use it any more (POSIX): the runtime keeps nothing of it.
    COUNTS.forget(s as u64);
    condvar::reset(s as *const c_void, SEM_COND);
    sync_ops::forget_internal(s as *const c_void, SEM_LOCK);
    0
}

/// # Safety
/// Same contract as `sem_wait`.
#[no_mangle]
pub unsafe extern "C" fn __irs_sem_wait(s: *mut libc::sem_t, site: u64) -> c_int {
    if plain() {
        // SAFETY: forwarded unchanged.
        return unsafe { libc::sem_wait(s) };
    }
    take(s, site, None)
}

/// # Safety
/// Same contract as `sem_trywait`.
#[no_mangle]
pub unsafe extern "C" fn __irs_sem_trywait(s: *mut libc::sem_t, site: u64) -> c_int {
    if plain() {
        // SAFETY: forwarded unchanged.
        return unsafe { libc::sem_trywait(s) };
    }
    let l = lock_of(s);
    sync_ops::lock(l, site);
    let got = with_count(s, |c| (*c > 0).then(|| *c -= 1)).is_some();
    sync_ops::unlock(l, site);
    if got { 0 } else { fail(libc::EAGAIN) }
}

fn timed(s: *mut libc::sem_t, clock: libc::clockid_t, abstime: *const libc::timespec, site: u64) -> c_int {
    match sync_ops::time_left(clock, abstime) {
        Err(e) => fail(e),
        Ok(left) => take(s, site, Some(left)),
    }
}

/// # Safety
/// Same contract as `sem_timedwait`.
#[no_mangle]
pub unsafe extern "C" fn __irs_sem_timedwait(s: *mut libc::sem_t, abstime: *const libc::timespec, site: u64) -> c_int {
    if plain() {
        // SAFETY: forwarded unchanged.
        return unsafe { libc::sem_timedwait(s, abstime) };
    }
    timed(s, libc::CLOCK_REALTIME, abstime, site)
}

extern "C" {
    fn sem_clockwait(s: *mut libc::sem_t, clock: libc::clockid_t, abstime: *const libc::timespec) -> c_int;
}

/// # Safety
/// Same contract as `sem_clockwait`.
#[no_mangle]
pub unsafe extern "C" fn __irs_sem_clockwait(s: *mut libc::sem_t, clock: libc::clockid_t, abstime: *const libc::timespec, site: u64) -> c_int {
    if plain() {
        // SAFETY: forwarded unchanged.
        return unsafe { sem_clockwait(s, clock, abstime) };
    }
    timed(s, clock, abstime, site)
}

/// # Safety
/// Same contract as `sem_post`.
#[no_mangle]
pub unsafe extern "C" fn __irs_sem_post(s: *mut libc::sem_t, site: u64) -> c_int {
    if plain() {
        // SAFETY: forwarded unchanged.
        return unsafe { libc::sem_post(s) };
    }
    let l = lock_of(s);
    sync_ops::lock(l, site);
    let overflow = with_count(s, |c| match c.checked_add(1).filter(|v| *v <= i32::MAX as u32) {
        Some(v) => {
            *c = v;
            false
        }
        None => true,
    });
    if !overflow {
        condvar::wake(s as *const c_void, SEM_COND, site, false);
    }
    sync_ops::unlock(l, site);
    if overflow { fail(libc::EOVERFLOW) } else { 0 }
}

/// # Safety
/// Same contract as `sem_getvalue`.
#[no_mangle]
pub unsafe extern "C" fn __irs_sem_getvalue(s: *mut libc::sem_t, value: *mut c_int, site: u64) -> c_int {
    if plain() {
        // SAFETY: forwarded unchanged.
        return unsafe { libc::sem_getvalue(s, value) };
    }
    let l = lock_of(s);
    sync_ops::lock(l, site);
    let v = with_count(s, |c| *c);
    sync_ops::unlock(l, site);
    if !value.is_null() {
        // SAFETY: the caller's out-parameter.
        unsafe { *value = v as c_int };
    }
    0
}
