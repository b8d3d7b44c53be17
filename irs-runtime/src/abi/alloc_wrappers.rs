//! `malloc`, `calloc`, `realloc` and `free`, routed to the runtime by the pass (DESIGN §3): in
//! EXPLORE the scheduler names each block by its allocating thread and that thread's
//! allocation count, so that a schedule names the same objects whatever unrelated threads
//! allocated. The allocation itself is the C library's, in every mode.
//!
//! A `free` (and a `realloc` of a block) is a visible operation in every mode: a write of every
//! word of the block (`AccessKind::Free`, `shared_proto::dependence`), made through the same
//! callbacks as an instrumented access, so that it counts as an event wherever an access does
//! (the thread's fast-path flag on) and is dependent with the other threads' accesses to the
//! block and their operations on mutexes in it. Its size is the C library's usable size of the
//! block, the same in every mode.
//!
//! In EXPLORE a freed block of the program's heap stays allocated in the C library for the rest
//! of the execution (`scheduler::freed`: a later use of it is reported as a use after free),
//! and `realloc` of one allocates the new block, copies and frees the old one so.

use crate::abi::callbacks::{__irs_after, __irs_before};
use crate::explore::scheduler;
use crate::mode::{self, Mode};
use crate::thread::thread_flag;
use shared_proto::abi::encode_info;
use shared_proto::AccessKind;
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

/// Run `release` (which frees or reallocates the heap block `p`) as the event that writes the
/// whole block (see the module doc); without the event where the thread makes none (a null
/// `p`, the fast-path flag off).
///
/// # Safety
/// `p` is null or a live block of the C library's allocator.
unsafe fn releasing<R>(p: *mut c_void, site: u64, release: impl FnOnce() -> R) -> R {
    if p.is_null() || !thread_flag::active() {
        return release();
    }
    // In EXPLORE the size the program asked for (what the block's words are must be a function
    // of the thread's history: how much the C library rounded it up to depends on what other
    // threads allocated and freed first); elsewhere, and for the C library's own blocks, what
    // the C library says.
    let asked = if explore() { scheduler::block_size(p) } else { None };
    // SAFETY: a live block of the allocator, per the contract.
    let size = asked.map_or_else(|| unsafe { libc::malloc_usable_size(p) }, |s| s.max(1) as usize);
    __irs_before(site, p, encode_info(AccessKind::Free, size as u64));
    let r = release();
    __irs_after(site);
    r
}

/// After a free's event in EXPLORE: free the block in the C library unless the execution keeps
/// it; a block freed before is a double free (reported here only where the event did not:
/// a thread without events).
fn released(p: *mut c_void, how: scheduler::Release) {
    match how {
        scheduler::Release::Keep => {}
        // SAFETY: a live block of the allocator, not one the scheduler keeps.
        scheduler::Release::Forward => unsafe { libc::free(p) },
        scheduler::Release::Again(message) => scheduler::violation(shared_proto::ViolationKind::Abort, &message),
    }
}

/// # Safety
/// Same contract as `realloc`.
#[no_mangle]
pub unsafe extern "C" fn __irs_realloc(old: *mut c_void, size: usize, site: u64) -> *mut c_void {
    if explore() && !old.is_null() && scheduler::is_heap_block(old) {
        // A moved or resized block is a new allocation of the thread that resized it; the old
        // one is freed as by `free` (kept by the execution). `realloc(p, 0)` frees `p` and
        // returns null, as glibc's does.
        // SAFETY: `old` is a live block of the allocator (the scheduler's heap map says so).
        let (p, how) = unsafe {
            releasing(old, site, || {
                // SAFETY: as above; `malloc` and a copy of what both blocks hold.
                let p = if size == 0 { std::ptr::null_mut() } else { libc::malloc(size) };
                if size != 0 && p.is_null() {
                    return (p, None);
                }
                if !p.is_null() {
                    let n = libc::malloc_usable_size(old).min(size);
                    std::ptr::copy_nonoverlapping(old as *const u8, p as *mut u8, n);
                    scheduler::allocated(p, size);
                }
                (p, Some(scheduler::freed(old)))
            })
        };
        if let Some(how) = how {
            released(old, how);
        }
        return p;
    }
    // SAFETY: `old` is null or a live block, per `realloc`'s contract.
    unsafe {
        releasing(old, site, || {
            // SAFETY: forwarded unchanged.
            let p = libc::realloc(old, size);
            if explore() && !p.is_null() {
                scheduler::allocated(p, size);
            }
            p
        })
    }
}

/// # Safety
/// Same contract as `free`.
#[no_mangle]
pub unsafe extern "C" fn __irs_free(p: *mut c_void, site: u64) {
    if explore() {
        // SAFETY: `p` is null or a live block, per `free`'s contract.
        let how = unsafe { releasing(p, site, || scheduler::freed(p)) };
        released(p, how);
        return;
    }
    // SAFETY: `p` is null or a live block, per `free`'s contract.
    unsafe {
        releasing(p, site, || {
            // SAFETY: forwarded unchanged.
            libc::free(p)
        })
    }
}
