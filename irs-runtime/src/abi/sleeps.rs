//! Sleeps (`sleep`, `usleep`, `nanosleep`, `clock_nanosleep`, C11 `thrd_sleep`), which the pass
//! routes here (DESIGN §5, §7). In EXPLORE a sleep costs no time: time is not part of what an
//! explored execution depends on (the scheduler decides who runs, and a sleeping thread would
//! only hold the one OS thread every logical thread shares), so the call returns at once, as a
//! sleep that ran its full length. It is no event: it changes nothing another thread can see,
//! and the thread's next visible operation is a scheduling decision like any other, where
//! another thread may run first. A polling loop (`while (!flag) usleep(..)`) therefore iterates
//! at the pace of the schedule: it ends once another thread sets the flag, or the spin-wait
//! rule (`spin_watch`; the pass counts a sleep as a call that changes nothing) ends an iteration
//! that read only what the previous one read. In every other mode (RECORD, ENFORCE, OFF) the
//! calls are the C library's; before it, a serialised run (`serial`) lets the other threads go
//! first, as the OS does while a thread sleeps (a thread that polls with a sleep until others
//! have moved would otherwise keep the turn for good), and does not hold the turn while it
//! sleeps. In EXPLORE the default policy (the first execution, on which published prefixes are
//! anchored, and the tail of every run) lets every thread that did not sleep go first, so that
//! the prefixes a production run follows keep the order the program's sleeps ask for.

use crate::mode::{self, Mode};
use std::ffi::{c_int, c_uint};

/// A sleep: in EXPLORE it returns at once (`at_once`), a point where the default policy lets
/// the other threads go first. Elsewhere it is the C library's (`real`); a serialised run's
/// sleeper first gives the turn away, then sleeps without holding it.
pub(crate) fn sleep_call<R>(nanos: u64, at_once: impl FnOnce() -> R, real: impl FnOnce() -> R) -> R {
    match mode::get() {
        Mode::Explore => {
            crate::explore::scheduler::slept(nanos);
            at_once()
        }
        Mode::Enforce => {
            crate::enforce::serial::yield_turn();
            let _asleep = crate::enforce::serial::asleep();
            real()
        }
        _ => real(),
    }
}

/// How long a `timespec` is, in ns (0 for none or an invalid one).
///
/// # Safety
/// `t` is null or points to a `timespec`.
unsafe fn length(t: *const libc::timespec) -> u64 {
    // SAFETY: per the contract (checked for null and validity).
    if t.is_null() || unsafe { invalid(t) } {
        return 0;
    }
    // SAFETY: as above.
    let t = unsafe { *t };
    (t.tv_sec as u64).saturating_mul(1_000_000_000).saturating_add(t.tv_nsec as u64)
}

/// A `timespec` the C library would refuse (`EINVAL`).
///
/// # Safety
/// `t` is null or points to a `timespec`.
unsafe fn invalid(t: *const libc::timespec) -> bool {
    // SAFETY: per the contract (checked for null).
    !t.is_null() && unsafe { (*t).tv_nsec < 0 || (*t).tv_nsec >= 1_000_000_000 || (*t).tv_sec < 0 }
}

#[no_mangle]
pub extern "C" fn __irs_sleep(seconds: c_uint, _site: u64) -> c_uint {
    // SAFETY: no preconditions.
    sleep_call(seconds as u64 * 1_000_000_000, || 0, || unsafe { libc::sleep(seconds) })
}

#[no_mangle]
pub extern "C" fn __irs_usleep(micros: libc::useconds_t, _site: u64) -> c_int {
    // SAFETY: no preconditions.
    sleep_call(micros as u64 * 1000, || 0, || unsafe { libc::usleep(micros) })
}

/// # Safety
/// Same contract as `nanosleep`.
#[no_mangle]
pub unsafe extern "C" fn __irs_nanosleep(req: *const libc::timespec, rem: *mut libc::timespec, _site: u64) -> c_int {
    // SAFETY: the caller's argument, per the contract.
    let nanos = unsafe { length(req) };
    sleep_call(
        nanos,
        || {
            // SAFETY: the caller's argument, per the contract.
            if unsafe { invalid(req) } {
                // SAFETY: errno of this thread.
                unsafe { *libc::__errno_location() = libc::EINVAL };
                return -1;
            }
            0
        },
        // SAFETY: forwarded unchanged.
        || unsafe { libc::nanosleep(req, rem) },
    )
}

/// # Safety
/// Same contract as `clock_nanosleep`.
#[no_mangle]
pub unsafe extern "C" fn __irs_clock_nanosleep(clock: libc::clockid_t, flags: c_int, req: *const libc::timespec, rem: *mut libc::timespec, _site: u64) -> c_int {
    // SAFETY: the caller's argument, per the contract.
    let nanos = unsafe { length(req) };
    let absolute = flags & libc::TIMER_ABSTIME != 0;
    sleep_call(
        if absolute { 0 } else { nanos },
        // An absolute sleep (`TIMER_ABSTIME`) ends at its time: the thread's virtual time
        // reaches it.
        || {
            // SAFETY: the caller's argument, per the contract.
            if unsafe { invalid(req) } {
                return libc::EINVAL;
            }
            if absolute {
                crate::abi::clock::sleep_until(clock, nanos);
            }
            0
        },
        // SAFETY: forwarded unchanged.
        || unsafe { libc::clock_nanosleep(clock, flags, req, rem) },
    )
}

/// `thrd_sleep`: 0 once slept, -1 when a signal interrupted it, another negative value on error
/// (C11 7.26.5.7; glibc's values). Outside EXPLORE it is `nanosleep`, as in glibc.
///
/// # Safety
/// Same contract as `thrd_sleep`.
#[no_mangle]
pub unsafe extern "C" fn __irs_thrd_sleep(duration: *const libc::timespec, remaining: *mut libc::timespec, site: u64) -> c_int {
    // SAFETY: forwarded.
    match unsafe { __irs_nanosleep(duration, remaining, site) } {
        0 => 0,
        // SAFETY: errno of this thread.
        _ if unsafe { *libc::__errno_location() } == libc::EINTR => -1,
        _ => -2,
    }
}
