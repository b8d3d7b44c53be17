//! `sleep`, `usleep`, `nanosleep` and `clock_nanosleep`, routed by the pass: a serialised run
//! (`serial`) lets the other threads go first where a thread sleeps, as the OS does while it
//! sleeps (a thread that polls with a sleep until others have moved would otherwise keep the
//! turn for good); then, and in every other mode, the C library's call.

use crate::mode::{self, Mode};
use std::ffi::{c_int, c_uint};

fn before_sleep() {
    if mode::get() == Mode::Enforce {
        crate::serial::yield_turn();
    }
}

#[no_mangle]
pub extern "C" fn __irs_sleep(seconds: c_uint, _site: u64) -> c_uint {
    before_sleep();
    // SAFETY: no preconditions.
    unsafe { libc::sleep(seconds) }
}

#[no_mangle]
pub extern "C" fn __irs_usleep(micros: libc::useconds_t, _site: u64) -> c_int {
    before_sleep();
    // SAFETY: no preconditions.
    unsafe { libc::usleep(micros) }
}

/// # Safety
/// Same contract as `nanosleep`.
#[no_mangle]
pub unsafe extern "C" fn __irs_nanosleep(req: *const libc::timespec, rem: *mut libc::timespec, _site: u64) -> c_int {
    before_sleep();
    // SAFETY: forwarded unchanged.
    unsafe { libc::nanosleep(req, rem) }
}

/// # Safety
/// Same contract as `clock_nanosleep`.
#[no_mangle]
pub unsafe extern "C" fn __irs_clock_nanosleep(clock: libc::clockid_t, flags: c_int, req: *const libc::timespec, rem: *mut libc::timespec, _site: u64) -> c_int {
    before_sleep();
    // SAFETY: forwarded unchanged.
    unsafe { libc::clock_nanosleep(clock, flags, req, rem) }
}
