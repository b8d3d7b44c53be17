//! `malloc`, `calloc`, `realloc` and `free`, routed to the runtime by the pass (DESIGN §3): in
//! EXPLORE the scheduler names each block by its allocating thread and that thread's
//! allocation count, so that a schedule names the same objects whatever unrelated threads
//! allocated. The allocation itself is the C library's, in every mode.

use crate::mode::{self, Mode};
use crate::explore::scheduler;
use std::ffi::c_void;

fn explore() -> bool {
    mode::get() == Mode::Explore
}

/// # Safety
/// Same contract as `malloc`.
#[no_mangle]
pub unsafe extern "C" fn __irs_malloc(size: usize, _site: u64) -> *mut c_void {
    // SAFETY: forwarded unchanged.
    let p = unsafe { libc::malloc(size) };
    if explore() {
        scheduler::allocated(p, size);
    }
    p
}

/// # Safety
/// Same contract as `calloc`.
#[no_mangle]
pub unsafe extern "C" fn __irs_calloc(n: usize, size: usize, _site: u64) -> *mut c_void {
    // SAFETY: forwarded unchanged.
    let p = unsafe { libc::calloc(n, size) };
    if explore() {
        scheduler::allocated(p, n.saturating_mul(size));
    }
    p
}

/// # Safety
/// Same contract as `realloc`.
#[no_mangle]
pub unsafe extern "C" fn __irs_realloc(old: *mut c_void, size: usize, _site: u64) -> *mut c_void {
    // SAFETY: forwarded unchanged.
    let p = unsafe { libc::realloc(old, size) };
    if explore() && !p.is_null() {
        // A moved or resized block is a new allocation of the thread that resized it.
        scheduler::freed(old);
        scheduler::allocated(p, size);
    }
    p
}

/// # Safety
/// Same contract as `free`.
#[no_mangle]
pub unsafe extern "C" fn __irs_free(p: *mut c_void, _site: u64) {
    if explore() {
        scheduler::freed(p);
    }
    // SAFETY: forwarded unchanged.
    unsafe { libc::free(p) }
}
