//! Read-write locks (DESIGN §3 "Objects and dependence"), the same in every mode but OFF, built
//! from internal locks and internal condition variables (`condvar`) so that two read acquisitions
//! commute (DESIGN §3, "reads commute"):
//!
//! - The holders are split over `RWLOCK_SLOTS` *reader slots*, each with its own internal lock:
//!   a reader counts itself in the slot of its thread (`sync_object::reader_slot` of its name by
//!   creation path, the same in every execution and mode), under that slot's lock only; a
//!   writer takes every slot's lock, in order, to check that no reader is counted anywhere and
//!   to set or clear itself as the writer. Two read acquisitions (or releases) by threads of
//!   different slots touch no common object: the exploration does not order them. Two threads
//!   of one slot are ordered (a sound over-approximation: more executions, the same behaviours);
//!   `main`'s first three children and `main` have slots of their own.
//! - A reader gets in whenever no writer holds the lock (readers are preferred, as glibc's
//!   default is; a waiting writer does not keep new readers out, which allows every order a
//!   writer-preferring lock allows and more), a writer whenever nobody holds it. The owner of
//!   the write lock gets `EDEADLK` locking again; the try variants `EBUSY`, the timed ones
//!   `ETIMEDOUT` wherever they would wait (EXPLORE: at any moment).
//! - Waiting: a reader that finds a writer waits on its slot's condition variable
//!   (`rwlock_slot_cond`, under its slot's lock); the writer's unlock, which holds every slot,
//!   wakes them. A writer that cannot get in counts itself as waiting (in every slot, holding
//!   them all), releases the other slots and waits on the writers' condition variable
//!   (`RWLOCK_COND`) under slot 0's lock; a reader whose release empties its slot while writers
//!   wait wakes them there (after releasing its own slot, in the order writers take the slots),
//!   and so does a writer's unlock. Every waker is on the list before the waiters' count it read
//!   could change, so no wake-up is lost.

use crate::sync::condvar;
use crate::mode::plain;
use crate::sync::sync_ops::{self, Obj};
use crate::sync::object_table::ObjectTable;
use crossbeam_utils::CachePadded;
use shared_proto::sync_object::{reader_slot, rwlock_slot_cond, rwlock_slot_lock, CondSpace, RWLOCK_COND, RWLOCK_SLOTS};
use std::ffi::{c_int, c_void};
use std::sync::atomic::{AtomicU32, Ordering::Relaxed};

const SLOTS: usize = RWLOCK_SLOTS as usize;

/// An rwlock's holders. Every field is read and changed only under the rwlock's internal
/// locks, as said for each, which order those accesses (EXPLORE: one logical thread runs at a
/// time; elsewhere the locks' acquire and release): the atomics are only there so that readers
/// of different slots can change their counts at once without a lock around the record, and
/// `Relaxed` is enough for them.
#[derive(Default)]
struct Holders {
    /// The writer's number (`sync_ops::me`) plus one, 0 for none: set and cleared holding every
    /// slot.
    writer: AtomicU32,
    /// Readers counted in each slot, changed under that slot's lock (a cache line each: readers
    /// of different slots change theirs at once).
    readers: [CachePadded<AtomicU32>; SLOTS],
    /// Writers waiting on `RWLOCK_COND`: changed holding every slot.
    writers_waiting: AtomicU32,
}

impl Holders {
    fn writer(&self) -> Option<u32> {
        self.writer.load(Relaxed).checked_sub(1)
    }

    fn set_writer(&self, w: Option<u32>) {
        self.writer.store(w.map_or(0, |w| w + 1), Relaxed);
    }

    fn readers(&self, slot: usize) -> u32 {
        self.readers[slot].load(Relaxed)
    }

    /// Nobody holds it (every slot's lock held).
    fn free(&self) -> bool {
        self.writer().is_none() && (0..SLOTS).all(|s| self.readers(s) == 0)
    }

    fn reset(&self) {
        self.set_writer(None);
        for r in &self.readers {
            r.store(0, Relaxed);
        }
        self.writers_waiting.store(0, Relaxed);
    }
}

/// Each rwlock's holders, by address.
static RWLOCKS: ObjectTable<Holders> = ObjectTable::new();

fn holders(r: *mut libc::pthread_rwlock_t) -> &'static Holders {
    RWLOCKS.get(r as u64)
}

fn slot_lock(r: *mut libc::pthread_rwlock_t, slot: usize) -> Obj {
    sync_ops::internal(r as *const c_void, rwlock_slot_lock(slot as u16))
}

/// The calling thread's reader slot.
fn my_slot() -> usize {
    reader_slot(sync_ops::my_name()) as usize
}

/// Lock the slots `from..` in order (a writer; slot 0 first, as every writer takes them).
fn lock_slots(r: *mut libc::pthread_rwlock_t, from: usize, site: u64) {
    for s in from..SLOTS {
        sync_ops::lock(slot_lock(r, s), site);
    }
}

/// Unlock the slots `from..`, last first.
fn unlock_slots(r: *mut libc::pthread_rwlock_t, from: usize, site: u64) {
    for s in (from..SLOTS).rev() {
        sync_ops::unlock(slot_lock(r, s), site);
    }
}

/// Wake every thread waiting on `space` (under the lock its waiters wait with; none: nothing).
fn wake_all(r: *mut libc::pthread_rwlock_t, space: CondSpace, site: u64) {
    condvar::wake(r as *const c_void, space, site, true);
}

/// How a locker waits when it cannot get in.
#[derive(Clone, Copy)]
enum Mode {
    Wait,
    Try,
    Timed(Option<std::time::Duration>),
}

fn read_acquire(r: *mut libc::pthread_rwlock_t, mode: Mode, site: u64) -> c_int {
    let slot = my_slot();
    let l = slot_lock(r, slot);
    let cond = rwlock_slot_cond(slot as u16);
    let me = sync_ops::me();
    let h = holders(r);
    sync_ops::lock(l, site);
    let rc = loop {
        let writer = h.writer();
        if writer == Some(me) {
            break libc::EDEADLK;
        }
        if writer.is_none() {
            h.readers[slot].fetch_add(1, Relaxed);
            break 0;
        }
        match mode {
            Mode::Try => break libc::EBUSY,
            Mode::Wait => {
                condvar::wait(r as *const c_void, cond, l, site, None);
            }
            Mode::Timed(left) => {
                let timed_out = condvar::wait(r as *const c_void, cond, l, site, Some(left)) == libc::ETIMEDOUT;
                if timed_out && h.writer().is_some() {
                    break libc::ETIMEDOUT;
                }
            }
        }
    };
    sync_ops::unlock(l, site);
    rc
}

fn write_acquire(r: *mut libc::pthread_rwlock_t, mode: Mode, site: u64) -> c_int {
    let me = sync_ops::me();
    let h = holders(r);
    lock_slots(r, 0, site);
    let rc = loop {
        if h.writer() == Some(me) {
            break libc::EDEADLK;
        }
        if h.free() {
            h.set_writer(Some(me));
            break 0;
        }
        let limit = match mode {
            Mode::Try => break libc::EBUSY,
            Mode::Wait => None,
            Mode::Timed(left) => Some(left),
        };
        h.writers_waiting.fetch_add(1, Relaxed);
        unlock_slots(r, 1, site);
        let timed_out = condvar::wait(r as *const c_void, RWLOCK_COND, slot_lock(r, 0), site, limit) == libc::ETIMEDOUT;
        lock_slots(r, 1, site);
        h.writers_waiting.fetch_sub(1, Relaxed);
        if timed_out && !h.free() {
            break libc::ETIMEDOUT;
        }
    };
    unlock_slots(r, 0, site);
    rc
}

fn acquire(r: *mut libc::pthread_rwlock_t, write: bool, mode: Mode, site: u64) -> c_int {
    if write { write_acquire(r, mode, site) } else { read_acquire(r, mode, site) }
}

fn release(r: *mut libc::pthread_rwlock_t, site: u64) -> c_int {
    let me = sync_ops::me();
    let h = holders(r);
    // Whether the caller is the writer needs no lock: only the writer sets the field to itself
    // and clears it, so it reads its own number there exactly while it holds the write lock
    // (a function of its own history), and never otherwise.
    if h.writer() == Some(me) {
        lock_slots(r, 0, site);
        h.set_writer(None);
        for s in 0..RWLOCK_SLOTS {
            wake_all(r, rwlock_slot_cond(s), site);
        }
        wake_all(r, RWLOCK_COND, site);
        unlock_slots(r, 0, site);
        return 0;
    }
    let slot = my_slot();
    let l = slot_lock(r, slot);
    sync_ops::lock(l, site);
    let (rc, wake) = match h.readers(slot) {
        0 => (libc::EPERM, false),
        n => {
            h.readers[slot].store(n - 1, Relaxed);
            (0, n == 1 && h.writers_waiting.load(Relaxed) > 0)
        }
    };
    if wake && slot == 0 {
        wake_all(r, RWLOCK_COND, site);
    }
    sync_ops::unlock(l, site);
    if wake && slot != 0 {
        let l0 = slot_lock(r, 0);
        sync_ops::lock(l0, site);
        wake_all(r, RWLOCK_COND, site);
        sync_ops::unlock(l0, site);
    }
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

forwarded!(__irs_pthread_rwlock_unlock, libc::pthread_rwlock_unlock, (), release);

forwarded!(__irs_pthread_rwlock_init, libc::pthread_rwlock_init, (attr: *const libc::pthread_rwlockattr_t), |r, site| {
    lock_slots(r, 0, site);
    holders(r).reset();
    condvar::reset(r as *const c_void, RWLOCK_COND);
    for s in 0..RWLOCK_SLOTS {
        condvar::reset(r as *const c_void, rwlock_slot_cond(s));
    }
    unlock_slots(r, 0, site);
    0
});

forwarded!(__irs_pthread_rwlock_destroy, libc::pthread_rwlock_destroy, (), |r, _site| {
    // No thread may use it any more (POSIX): the runtime keeps nothing of it.
    RWLOCKS.forget(r as u64);
    condvar::reset(r as *const c_void, RWLOCK_COND);
    for s in 0..RWLOCK_SLOTS {
        condvar::reset(r as *const c_void, rwlock_slot_cond(s));
        sync_ops::forget_internal(r as *const c_void, rwlock_slot_lock(s));
    }
    0
});
