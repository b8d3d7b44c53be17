//! Barriers (DESIGN §3 "Objects and dependence"): a count of arrivals and a generation under the
//! barrier's internal lock, and an internal condition variable (`condvar`, `BARRIER_COND`) the
//! early arrivals wait on; the same in every mode but OFF. The thread whose arrival completes the
//! count starts the next generation, wakes every waiter and returns
//! `PTHREAD_BARRIER_SERIAL_THREAD`; the others return 0 once their generation has completed. A
//! barrier short of a thread is a deadlock, reported with the threads waiting at it.

use crate::sync::condvar;
use crate::mode::plain;
use crate::sync::sync_ops::{self, Obj};
use crate::sync::object_table::ObjectTable;
use parking_lot::Mutex;
use shared_proto::sync_object::{BARRIER_COND, BARRIER_LOCK};
use std::ffi::{c_int, c_uint, c_void};

/// Each barrier's (threads it waits for, arrivals so far, generation), by address; read and
/// changed under its internal lock only (the Rust lock is never contended).
static BARRIERS: ObjectTable<Mutex<(u32, u32, u64)>> = ObjectTable::new();

fn with_state<R>(b: *mut libc::pthread_barrier_t, f: impl FnOnce(&mut (u32, u32, u64)) -> R) -> R {
    f(&mut BARRIERS.get(b as u64).lock())
}

fn lock_of(b: *mut libc::pthread_barrier_t) -> Obj {
    sync_ops::internal(b as *const c_void, BARRIER_LOCK)
}

/// # Safety
/// Same contract as `pthread_barrier_init`.
#[no_mangle]
pub unsafe extern "C" fn __irs_pthread_barrier_init(b: *mut libc::pthread_barrier_t, attr: *const libc::pthread_barrierattr_t, count: c_uint, site: u64) -> c_int {
    if plain() {
        // SAFETY: forwarded unchanged.
        return unsafe { libc::pthread_barrier_init(b, attr, count) };
    }
    if count == 0 {
        return libc::EINVAL;
    }
    let l = lock_of(b);
    sync_ops::lock(l, site);
    with_state(b, |s| *s = (count, 0, 0));
    condvar::reset(b as *const c_void, BARRIER_COND);
    sync_ops::unlock(l, site);
    0
}

/// # Safety
/// Same contract as `pthread_barrier_destroy`.
#[no_mangle]
pub unsafe extern "C" fn __irs_pthread_barrier_destroy(b: *mut libc::pthread_barrier_t, _site: u64) -> c_int {
    if plain() {
        // SAFETY: forwarded unchanged.
        return unsafe { libc::pthread_barrier_destroy(b) };
    }
    // No thread may use it any more (POSIX): the runtime keeps nothing of it.
    BARRIERS.forget(b as u64);
    condvar::reset(b as *const c_void, BARRIER_COND);
    sync_ops::forget_internal(b as *const c_void, BARRIER_LOCK);
    0
}

/// # Safety
/// Same contract as `pthread_barrier_wait`.
#[no_mangle]
pub unsafe extern "C" fn __irs_pthread_barrier_wait(b: *mut libc::pthread_barrier_t, site: u64) -> c_int {
    if plain() {
        // SAFETY: forwarded unchanged.
        return unsafe { libc::pthread_barrier_wait(b) };
    }
    let l = lock_of(b);
    sync_ops::lock(l, site);
    let (last, generation) = with_state(b, |s| {
        if s.0 == 0 {
            return (None, 0);
        }
        s.1 += 1;
        if s.1 == s.0 {
            s.1 = 0;
            s.2 += 1;
            (Some(true), s.2)
        } else {
            (Some(false), s.2)
        }
    });
    let rc = match last {
        // Not initialised.
        None => libc::EINVAL,
        Some(true) => {
            condvar::wake(b as *const c_void, BARRIER_COND, site, true);
            libc::PTHREAD_BARRIER_SERIAL_THREAD
        }
        Some(false) => {
            while with_state(b, |s| s.2) == generation {
                condvar::wait(b as *const c_void, BARRIER_COND, l, site, None);
            }
            0
        }
    };
    sync_ops::unlock(l, site);
    rc
}
