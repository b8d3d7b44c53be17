//! C11 threads (`<threads.h>`; DESIGN §3, §5): `thrd_*`, `mtx_*`, `cnd_*`, `call_once` and `tss_*`
//! are the pthread operations irs already models, under other names and return codes. glibc builds
//! them on pthreads with the same layouts (`mtx_t` is a `pthread_mutex_t`, `cnd_t` a
//! `pthread_cond_t`, `once_flag` a `pthread_once_t`, `thrd_t` a `pthread_t`, `tss_t` a
//! `pthread_key_t`), so each wrapper calls the pthread wrapper and translates the result
//! (`thrd_success` 0, `thrd_busy` 1, `thrd_error` 2, `thrd_nomem` 3, `thrd_timedout` 4). A thread's
//! `int` result travels as its `void *` exit value, as in glibc.

use crate::abi::pthread_wrappers as pw;
use crate::sync::mutex;
use crate::sync::{condvar, once};
use std::ffi::{c_int, c_void};

const THRD_SUCCESS: c_int = 0;
const THRD_BUSY: c_int = 1;
const THRD_ERROR: c_int = 2;
const THRD_NOMEM: c_int = 3;
const THRD_TIMEDOUT: c_int = 4;

/// A pthread result as a C11 one.
fn code(rc: c_int) -> c_int {
    match rc {
        0 => THRD_SUCCESS,
        libc::EBUSY => THRD_BUSY,
        libc::ETIMEDOUT => THRD_TIMEDOUT,
        libc::EAGAIN | libc::ENOMEM => THRD_NOMEM,
        _ => THRD_ERROR,
    }
}

type ThrdStart = extern "C" fn(*mut c_void) -> c_int;

extern "C" fn trampoline(p: *mut c_void) -> *mut c_void {
    // SAFETY: `p` is the box `__irs_thrd_create` leaked for this thread alone.
    let (f, arg) = *unsafe { Box::from_raw(p as *mut (ThrdStart, *mut c_void)) };
    f(arg) as isize as *mut c_void
}

/// # Safety
/// Same contract as `thrd_create`.
#[no_mangle]
pub unsafe extern "C" fn __irs_thrd_create(thr: *mut libc::pthread_t, func: ThrdStart, arg: *mut c_void, site: u64) -> c_int {
    let start = Box::into_raw(Box::new((func, arg))) as *mut c_void;
    // SAFETY: the caller's thread slot; our trampoline owns `start`.
    let rc = unsafe { pw::__irs_pthread_create(thr, std::ptr::null(), trampoline, start, site) };
    if rc != 0 {
        // SAFETY: the thread was not created: `start` is still ours.
        drop(unsafe { Box::from_raw(start as *mut (ThrdStart, *mut c_void)) });
    }
    code(rc)
}

/// # Safety
/// Same contract as `thrd_join`.
#[no_mangle]
pub unsafe extern "C" fn __irs_thrd_join(thr: libc::pthread_t, res: *mut c_int, site: u64) -> c_int {
    let mut value: *mut c_void = std::ptr::null_mut();
    // SAFETY: forwarded; `value` is ours.
    let rc = unsafe { pw::__irs_pthread_join(thr, &mut value, site) };
    if rc == 0 && !res.is_null() {
        // SAFETY: the caller's out-parameter.
        unsafe { *res = value as isize as c_int };
    }
    code(rc)
}

/// # Safety
/// Same contract as `thrd_exit`.
#[no_mangle]
pub unsafe extern "C" fn __irs_thrd_exit(res: c_int, site: u64) -> ! {
    // SAFETY: forwarded.
    unsafe { pw::__irs_pthread_exit(res as isize as *mut c_void, site) }
}

#[no_mangle]
pub extern "C" fn __irs_thrd_current(site: u64) -> libc::pthread_t {
    pw::__irs_pthread_self(site)
}

/// # Safety
/// Same contract as `thrd_detach`.
#[no_mangle]
pub unsafe extern "C" fn __irs_thrd_detach(thr: libc::pthread_t, site: u64) -> c_int {
    // SAFETY: forwarded.
    code(unsafe { pw::__irs_pthread_detach(thr, site) })
}

#[no_mangle]
pub extern "C" fn __irs_thrd_yield(site: u64) {
    pw::__irs_sched_yield(site);
}

/// # Safety
/// Same contract as `mtx_init` (`mtx_plain`, `mtx_recursive` and `mtx_timed` combine).
#[no_mangle]
pub unsafe extern "C" fn __irs_mtx_init(m: *mut libc::pthread_mutex_t, kind: c_int, site: u64) -> c_int {
    // SAFETY: an attribute object of our own, then the caller's mutex.
    unsafe {
        let mut attr: libc::pthread_mutexattr_t = std::mem::zeroed();
        libc::pthread_mutexattr_init(&mut attr);
        if kind & 1 != 0 {
            libc::pthread_mutexattr_settype(&mut attr, libc::PTHREAD_MUTEX_RECURSIVE);
        }
        let rc = mutex::__irs_pthread_mutex_init(m, &attr, site);
        libc::pthread_mutexattr_destroy(&mut attr);
        code(rc)
    }
}

/// # Safety
/// Same contract as `mtx_lock`.
#[no_mangle]
pub unsafe extern "C" fn __irs_mtx_lock(m: *mut libc::pthread_mutex_t, site: u64) -> c_int {
    // SAFETY: forwarded.
    code(unsafe { mutex::__irs_pthread_mutex_lock(m, site) })
}

/// # Safety
/// Same contract as `mtx_trylock`.
#[no_mangle]
pub unsafe extern "C" fn __irs_mtx_trylock(m: *mut libc::pthread_mutex_t, site: u64) -> c_int {
    // SAFETY: forwarded.
    code(unsafe { mutex::__irs_pthread_mutex_trylock(m, site) })
}

/// # Safety
/// Same contract as `mtx_timedlock`.
#[no_mangle]
pub unsafe extern "C" fn __irs_mtx_timedlock(m: *mut libc::pthread_mutex_t, abstime: *const libc::timespec, site: u64) -> c_int {
    // SAFETY: forwarded.
    code(unsafe { mutex::__irs_pthread_mutex_timedlock(m, abstime, site) })
}

/// # Safety
/// Same contract as `mtx_unlock`.
#[no_mangle]
pub unsafe extern "C" fn __irs_mtx_unlock(m: *mut libc::pthread_mutex_t, site: u64) -> c_int {
    // SAFETY: forwarded.
    code(unsafe { mutex::__irs_pthread_mutex_unlock(m, site) })
}

/// # Safety
/// Same contract as `cnd_init`.
#[no_mangle]
pub unsafe extern "C" fn __irs_cnd_init(c: *mut libc::pthread_cond_t, site: u64) -> c_int {
    // SAFETY: forwarded, with default attributes.
    code(unsafe { condvar::__irs_pthread_cond_init(c, std::ptr::null(), site) })
}

/// # Safety
/// Same contract as `cnd_wait`.
#[no_mangle]
pub unsafe extern "C" fn __irs_cnd_wait(c: *mut libc::pthread_cond_t, m: *mut libc::pthread_mutex_t, site: u64) -> c_int {
    // SAFETY: forwarded.
    code(unsafe { condvar::__irs_pthread_cond_wait(c, m, site) })
}

/// # Safety
/// Same contract as `cnd_timedwait`.
#[no_mangle]
pub unsafe extern "C" fn __irs_cnd_timedwait(c: *mut libc::pthread_cond_t, m: *mut libc::pthread_mutex_t, abstime: *const libc::timespec, site: u64) -> c_int {
    // SAFETY: forwarded.
    code(unsafe { condvar::__irs_pthread_cond_timedwait(c, m, abstime, site) })
}

/// # Safety
/// Same contract as `cnd_signal`.
#[no_mangle]
pub unsafe extern "C" fn __irs_cnd_signal(c: *mut libc::pthread_cond_t, site: u64) -> c_int {
    // SAFETY: forwarded.
    code(unsafe { condvar::__irs_pthread_cond_signal(c, site) })
}

/// # Safety
/// Same contract as `cnd_broadcast`.
#[no_mangle]
pub unsafe extern "C" fn __irs_cnd_broadcast(c: *mut libc::pthread_cond_t, site: u64) -> c_int {
    // SAFETY: forwarded.
    code(unsafe { condvar::__irs_pthread_cond_broadcast(c, site) })
}

/// # Safety
/// Same contract as `cnd_destroy`.
#[no_mangle]
pub unsafe extern "C" fn __irs_cnd_destroy(c: *mut libc::pthread_cond_t, site: u64) {
    // SAFETY: forwarded.
    unsafe { condvar::__irs_pthread_cond_destroy(c, site) };
}

/// # Safety
/// Same contract as `call_once`.
#[no_mangle]
pub unsafe extern "C" fn __irs_call_once(flag: *mut libc::pthread_once_t, func: Option<extern "C" fn()>, site: u64) {
    // SAFETY: forwarded.
    unsafe { once::__irs_pthread_once(flag, func, site) };
}

/// # Safety
/// Same contract as `tss_create`.
#[no_mangle]
pub unsafe extern "C" fn __irs_tss_create(key: *mut libc::pthread_key_t, dtor: Option<unsafe extern "C" fn(*mut c_void)>, site: u64) -> c_int {
    // SAFETY: forwarded.
    code(unsafe { pw::__irs_pthread_key_create(key, dtor, site) })
}

#[no_mangle]
pub extern "C" fn __irs_tss_get(key: libc::pthread_key_t, site: u64) -> *mut c_void {
    pw::__irs_pthread_getspecific(key, site)
}

/// # Safety
/// Same contract as `tss_set`.
#[no_mangle]
pub unsafe extern "C" fn __irs_tss_set(key: libc::pthread_key_t, value: *mut c_void, site: u64) -> c_int {
    // SAFETY: forwarded.
    code(unsafe { pw::__irs_pthread_setspecific(key, value, site) })
}

#[no_mangle]
pub extern "C" fn __irs_tss_delete(key: libc::pthread_key_t, site: u64) {
    pw::__irs_pthread_key_delete(key, site);
}
