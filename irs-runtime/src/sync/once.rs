//! `pthread_once` (DESIGN §3): the function runs under the control's internal lock, and the
//! control remembers that it ran; the same in every mode but OFF. A caller that comes while the
//! function runs waits for the lock, then finds it done, as POSIX says.

use crate::mode::plain;
use crate::sync::sync_ops;
use parking_lot::Mutex;
use shared_proto::sync_object::ONCE_LOCK;
use std::collections::HashSet;
use std::ffi::{c_int, c_void};

/// The controls whose function has run, by address; read and changed under their lock only.
static DONE: Mutex<Option<HashSet<u64>>> = Mutex::new(None);

/// # Safety
/// Same contract as `pthread_once`.
#[no_mangle]
pub unsafe extern "C" fn __irs_pthread_once(control: *mut libc::pthread_once_t, init: Option<extern "C" fn()>, site: u64) -> c_int {
    if plain() {
        // SAFETY: forwarded unchanged.
        return unsafe { libc::pthread_once(control, init.expect("pthread_once: no function")) };
    }
    let l = sync_ops::internal(control as *const c_void, ONCE_LOCK);
    sync_ops::lock(l, site);
    let first = DONE.lock().get_or_insert_with(HashSet::new).insert(control as u64);
    if first {
        if let Some(f) = init {
            // The program's init function, called once, as pthread_once would.
            f();
        }
    }
    sync_ops::unlock(l, site);
    0
}
