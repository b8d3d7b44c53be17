//! Read-write locks (issue 20): the holders (a writer, or a count of readers) under the
//! rwlock's internal lock, and an internal condition variable (`condvar`, `RWLOCK_COND`) that
//! blocked lockers wait on; the same in every mode but OFF. A reader gets in whenever no writer
//! holds it (readers are preferred, as glibc's default is; a waiting writer does not keep new
//! readers out, which allows every order a writer-preferring lock allows and more), a writer
//! whenever nobody holds it; every unlock wakes every waiter, who check again. The owner of the
//! write lock gets `EDEADLK` locking again; the try variants `EBUSY`, the timed ones
//! `ETIMEDOUT` wherever they would wait (EXPLORE: at any moment).
//!
//! Two read acquisitions are ordered here: both are events on the internal lock, so the
//! exploration tells apart executions that differ only in the order of two readers (more
//! executions than needed, the same behaviours; DESIGN §3's "reads commute" refinement would
//! remove them).

use crate::condvar;
use crate::pthread_wrappers::plain;
use crate::sync_ops::{self, Obj};
use parking_lot::Mutex;
use shared_proto::sync_object::{RWLOCK_COND, RWLOCK_LOCK};
use std::collections::HashMap;
use std::ffi::{c_int, c_void};

#[derive(Default, Clone, Copy)]
struct Holders {
    /// The writer's number (`sync_ops::me`).
    writer: Option<u32>,
    readers: u32,
}

/// Each rwlock's holders, by address; read and changed under its internal lock only.
static RWLOCKS: Mutex<Option<HashMap<u64, Holders>>> = Mutex::new(None);

fn with_holders<R>(r: *mut libc::pthread_rwlock_t, f: impl FnOnce(&mut Holders) -> R) -> R {
    let mut t = RWLOCKS.lock();
    f(t.get_or_insert_with(HashMap::new).entry(r as u64).or_default())
}

fn lock_of(r: *mut libc::pthread_rwlock_t) -> Obj {
    sync_ops::internal(r as *const c_void, RWLOCK_LOCK)
}

/// How a locker waits when it cannot get in.
#[derive(Clone, Copy)]
enum Mode {
    Wait,
    Try,
    Timed(Option<std::time::Duration>),
}

fn acquire(r: *mut libc::pthread_rwlock_t, write: bool, mode: Mode, site: u64) -> c_int {
    let l = lock_of(r);
    let me = sync_ops::me();
    sync_ops::lock(l, site);
    let rc = loop {
        let h = with_holders(r, |h| *h);
        if h.writer == Some(me) {
            break libc::EDEADLK;
        }
        let free = if write { h.writer.is_none() && h.readers == 0 } else { h.writer.is_none() };
        if free {
            with_holders(r, |h| if write { h.writer = Some(me) } else { h.readers += 1 });
            break 0;
        }
        match mode {
            Mode::Try => break libc::EBUSY,
            Mode::Wait => {
                condvar::wait(r as *const c_void, RWLOCK_COND, l, site, None);
            }
            Mode::Timed(left) => {
                let timed_out = condvar::wait(r as *const c_void, RWLOCK_COND, l, site, Some(left)) == libc::ETIMEDOUT;
                let h = with_holders(r, |h| *h);
                let free = if write { h.writer.is_none() && h.readers == 0 } else { h.writer.is_none() };
                if timed_out && !free {
                    break libc::ETIMEDOUT;
                }
            }
        }
    };
    sync_ops::unlock(l, site);
    rc
}

fn timed(r: *mut libc::pthread_rwlock_t, write: bool, clock: libc::clockid_t, abstime: *const libc::timespec, site: u64) -> c_int {
    match sync_ops::time_left(clock, abstime) {
        Err(e) => e,
        Ok(left) => acquire(r, write, Mode::Timed(left), site),
    }
}

macro_rules! forwarded {
    ($name:ident, $real:path, ($($arg:ident: $ty:ty),*), $body:expr) => {
        /// # Safety
        /// Same contract as the pthread function it stands for.
        #[no_mangle]
        pub unsafe extern "C" fn $name(r: *mut libc::pthread_rwlock_t, $($arg: $ty,)* site: u64) -> c_int {
            if plain() {
                // SAFETY: forwarded unchanged.
                return unsafe { $real(r, $($arg),*) };
            }
            let f: &dyn Fn(*mut libc::pthread_rwlock_t, u64) -> c_int = &$body;
            f(r, site)
        }
    };
}

extern "C" {
    fn pthread_rwlock_clockrdlock(r: *mut libc::pthread_rwlock_t, clock: libc::clockid_t, abstime: *const libc::timespec) -> c_int;
    fn pthread_rwlock_clockwrlock(r: *mut libc::pthread_rwlock_t, clock: libc::clockid_t, abstime: *const libc::timespec) -> c_int;
    fn pthread_rwlock_timedrdlock(r: *mut libc::pthread_rwlock_t, abstime: *const libc::timespec) -> c_int;
    fn pthread_rwlock_timedwrlock(r: *mut libc::pthread_rwlock_t, abstime: *const libc::timespec) -> c_int;
}

forwarded!(__irs_pthread_rwlock_rdlock, libc::pthread_rwlock_rdlock, (), |r, site| acquire(r, false, Mode::Wait, site));
forwarded!(__irs_pthread_rwlock_wrlock, libc::pthread_rwlock_wrlock, (), |r, site| acquire(r, true, Mode::Wait, site));
forwarded!(__irs_pthread_rwlock_tryrdlock, libc::pthread_rwlock_tryrdlock, (), |r, site| acquire(r, false, Mode::Try, site));
forwarded!(__irs_pthread_rwlock_trywrlock, libc::pthread_rwlock_trywrlock, (), |r, site| acquire(r, true, Mode::Try, site));
forwarded!(__irs_pthread_rwlock_timedrdlock, pthread_rwlock_timedrdlock, (abstime: *const libc::timespec), move |r, site| timed(r, false, libc::CLOCK_REALTIME, abstime, site));
forwarded!(__irs_pthread_rwlock_timedwrlock, pthread_rwlock_timedwrlock, (abstime: *const libc::timespec), move |r, site| timed(r, true, libc::CLOCK_REALTIME, abstime, site));
forwarded!(__irs_pthread_rwlock_clockrdlock, pthread_rwlock_clockrdlock, (clock: libc::clockid_t, abstime: *const libc::timespec), move |r, site| timed(r, false, clock, abstime, site));
forwarded!(__irs_pthread_rwlock_clockwrlock, pthread_rwlock_clockwrlock, (clock: libc::clockid_t, abstime: *const libc::timespec), move |r, site| timed(r, true, clock, abstime, site));

forwarded!(__irs_pthread_rwlock_unlock, libc::pthread_rwlock_unlock, (), |r, site| {
    let l = lock_of(r);
    let me = sync_ops::me();
    sync_ops::lock(l, site);
    let rc = with_holders(r, |h| {
        if h.writer == Some(me) {
            h.writer = None;
            0
        } else if h.readers > 0 {
            h.readers -= 1;
            0
        } else {
            libc::EPERM
        }
    });
    if rc == 0 && condvar::has_waiters(r as *const c_void, RWLOCK_COND) {
        condvar::wake(r as *const c_void, RWLOCK_COND, site, true);
    }
    sync_ops::unlock(l, site);
    rc
});

forwarded!(__irs_pthread_rwlock_init, libc::pthread_rwlock_init, (attr: *const libc::pthread_rwlockattr_t), |r, site| {
    let l = lock_of(r);
    sync_ops::lock(l, site);
    with_holders(r, |h| *h = Holders::default());
    condvar::reset(r as *const c_void, RWLOCK_COND);
    sync_ops::unlock(l, site);
    0
});

forwarded!(__irs_pthread_rwlock_destroy, libc::pthread_rwlock_destroy, (), |_r, _site| 0);
