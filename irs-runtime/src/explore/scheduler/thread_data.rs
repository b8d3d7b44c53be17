//! What the C library keeps per OS thread, kept per logical thread (DESIGN §7): the synthetic
//! `pthread_t` handles, `pthread_self`, and thread-specific data (keys, values, destructors).
//! errno and the TLS block are switched with the running thread, in `decision`.
//!
//! None of this is a visible operation: it must never make a scheduling decision or record an
//! event (the destructors it runs are the program's code, which may).

use super::{current, with};
use shared_proto::explore_buffer::MAX_THREADS;
use std::ffi::{c_int, c_void};

/// Synthetic `pthread_t` values of logical threads in EXPLORE.
const HANDLE_BASE: u64 = 0x1_0000_0000;

pub(super) fn handle_of(tid: u32) -> u64 {
    HANDLE_BASE + tid as u64
}

pub(super) fn tid_of(handle: u64) -> Option<u32> {
    handle.checked_sub(HANDLE_BASE).filter(|t| *t < MAX_THREADS as u64).map(|t| t as u32)
}

pub fn self_handle() -> u64 {
    handle_of(current())
}

pub fn key_create(key: *mut u32, destructor: Option<extern "C" fn(*mut c_void)>) -> c_int {
    with(|s| {
        s.keys.push((true, destructor));
        // SAFETY: the caller's pthread_key_t (an unsigned int) slot.
        unsafe { *key = (s.keys.len() - 1) as u32 };
    });
    0
}

pub fn key_delete(key: u32) -> c_int {
    with(|s| match s.keys.get_mut(key as usize) {
        Some(k) if k.0 => {
            k.0 = false;
            0
        }
        _ => libc::EINVAL,
    })
}

pub fn get_specific(key: u32) -> *mut c_void {
    with(|s| s.threads[s.current].specific.iter().find(|e| e.0 == key).map_or(std::ptr::null_mut(), |e| e.1))
}

pub fn set_specific(key: u32, value: *mut c_void) -> c_int {
    with(|s| {
        if !s.keys.get(key as usize).is_some_and(|k| k.0) {
            return libc::EINVAL;
        }
        let cur = s.current;
        let slot = &mut s.threads[cur].specific;
        match slot.iter_mut().find(|e| e.0 == key) {
            Some(e) => e.1 = value,
            None => slot.push((key, value)),
        }
        0
    })
}

/// Run the thread-specific data destructors of the ending thread (as pthread_exit does).
pub(super) fn run_key_destructors() {
    for _ in 0..4 {
        let pending: Vec<(extern "C" fn(*mut c_void), *mut c_void)> = with(|s| {
            let cur = s.current;
            let mut out = Vec::new();
            for (key, (live, dtor)) in s.keys.iter().enumerate() {
                if let (true, Some(d)) = (live, dtor) {
                    let slot = s.threads[cur].specific.iter_mut().find(|e| e.0 == key as u32);
                    if let Some(e) = slot.filter(|e| !e.1.is_null()) {
                        out.push((*d, std::mem::replace(&mut e.1, std::ptr::null_mut())));
                    }
                }
            }
            out
        });
        if pending.is_empty() {
            return;
        }
        for (d, v) in pending {
            d(v);
        }
    }
}
