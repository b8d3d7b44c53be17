//! Read-write locks (DESIGN §3 "Objects and dependence"; docs/src/synchronisation.md): each
//! acquisition and release is one event on the rwlock (`EventKind::Rw*`, object
//! `ObjectRef::RwLock`), the same in every mode but OFF:
//! - a reader gets in whenever no writer holds the lock (readers preferred, as glibc's default:
//!   a waiting writer does not keep new readers out, which allows every order a
//!   writer-preferring lock allows), a writer whenever nobody holds it; an acquisition that
//!   would block is no event until a release lets it in. The writer locking again gets
//!   `EDEADLK` (no event); the try variants get `EBUSY` where they would wait
//!   (`RwTry*Fail`), the timed ones `ETIMEDOUT` (EXPLORE: a try, since the exploration does not
//!   model time). An unlock by a thread that holds nothing is a violation in EXPLORE (undefined
//!   in POSIX) and `EPERM` (no event) elsewhere.
//! - EXPLORE: the scheduler keeps the holders and grants an acquisition only when it can get in
//!   (`explore::scheduler::rwlocks`).
//! - A run relaxed from its start: glibc's rwlock, for every rwlock of its default kind
//!   (`rwlock_native`).
//! - ENFORCE, RECORD, chaos: the holders in one atomic word (a writer bit or the readers'
//!   count), taken with a compare-exchange, blocked acquisitions waiting on a futex for it to
//!   change, each operation inside its event's rules and recording (when recording, under the
//!   recorder's lock: the recorded order is the order in which the holders changed). A
//!   serialised run gives an acquisition its turn only when it can get in (the lock's "read"
//!   name is held for the serialisation while a writer holds it, its "write" name while anyone
//!   does).
//!
//! Two reader operations (acquisitions, tried or not, and releases) commute: the exploration
//! puts each on its thread's copy of the rwlock, the requirement table never orders them; a
//! writer's operation is dependent with every other.

use crate::enforce::event::{enforced, recording};
use crate::enforce::serial::{self, Op};
use crate::explore::scheduler;
use crate::mode::{explore, plain};
use crate::record::recorder;
use crate::sync::object_table::ObjectTable;
use crate::sync::rwlock_native;
use crate::sync::sync_ops;
use shared_proto::sync_object::{self, RWLOCK_LOCK, RWLOCK_READ_BLOCK};
use shared_proto::{EventKind, ObjectRef, SiteId};
use std::cell::RefCell;
use std::ffi::c_int;
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::{Duration, Instant};

/// An rwlock outside EXPLORE: its holders in one word (`WRITER`, or the readers' count), the
/// writer's `sync_ops::me` plus one (0 for none), and how many threads wait to get in.
#[derive(Default)]
pub(super) struct Rw {
    state: AtomicU32,
    writer: AtomicU32,
    waiters: AtomicU32,
}

/// The bit of `Rw::state` a writer holds.
const WRITER: u32 = 1 << 31;

/// Used outside EXPLORE only (`super::outside_explore_tables`).
pub(super) static RWLOCKS: ObjectTable<Rw> = ObjectTable::new();

thread_local! {
    /// The rwlocks the calling thread holds for reading, with how many times (so that an
    /// unlock knows whether it is a reader's).
    static READS: RefCell<Vec<(u64, u32)>> = const { RefCell::new(Vec::new()) };
}

fn rw(r: *mut libc::pthread_rwlock_t) -> &'static Rw {
    debug_assert!(!crate::mode::explore(), "an rwlock's table in EXPLORE (not restored between executions)");
    RWLOCKS.get(r as u64)
}

fn my_reads(r: *mut libc::pthread_rwlock_t) -> u32 {
    // `try_with`: an unlock in a thread-local's destructor, after this one's, finds nothing.
    READS.try_with(|v| v.borrow().iter().find(|(x, _)| *x == r as u64).map_or(0, |&(_, n)| n)).unwrap_or(0)
}

fn add_my_read(r: *mut libc::pthread_rwlock_t, delta: i32) {
    let _ = READS.try_with(|v| {
        let mut v = v.borrow_mut();
        match v.iter().position(|(x, _)| *x == r as u64) {
            Some(i) => {
                let n = (v[i].1 as i32 + delta).max(0) as u32;
                if n == 0 {
                    v.swap_remove(i);
                } else {
                    v[i].1 = n;
                }
            }
            None if delta > 0 => v.push((r as u64, delta as u32)),
            None => {}
        }
    });
}

/// The names a serialised run keeps "held": reading while a writer holds it, writing while
/// anyone does.
fn serial_name(r: *mut libc::pthread_rwlock_t, write: bool) -> usize {
    sync_object::sub(r as u64, if write { RWLOCK_LOCK } else { RWLOCK_READ_BLOCK }) as usize
}

/// The serialisation's view of the holders `state`, after they changed.
fn serial_update(r: *mut libc::pthread_rwlock_t, state: u32) {
    if !serial::on() {
        return;
    }
    for (write, held) in [(false, state & WRITER != 0), (true, state != 0)] {
        if held {
            serial::locked(serial_name(r, write));
        } else {
            serial::unlocked(serial_name(r, write));
        }
    }
}

fn record(rec: Option<parking_lot::MutexGuard<'_, recorder::RecorderState>>, site: u64, kind: EventKind, r: *mut libc::pthread_rwlock_t) {
    if let Some(mut rec) = rec {
        rec.push(Some(SiteId(site)), kind, ObjectRef::RwLock { addr: r as u64, logical: None });
    }
}

/// Get in if it can be had now; records `kind` (or its failure, `fail_kind`, when `fail_kind`
/// is given). `Err(state)`: not now, and nothing recorded (a blocking acquisition waits for
/// the holders to change from `state`). Recording, under the recorder's lock: the recorded
/// order is the order in which the holders changed.
fn try_get(r: *mut libc::pthread_rwlock_t, write: bool, site: u64, kind: EventKind, fail_kind: Option<EventKind>) -> Result<bool, u32> {
    let x = rw(r);
    let rec = recording().then(recorder::lock);
    // Acquire (SeqCst, for `acquire_waiting`'s protocol with `waiters`): an acquisition sees
    // what the last holder did before its release.
    let mut seen = x.state.load(Ordering::SeqCst);
    let got = loop {
        let can = if write { seen == 0 } else { seen & WRITER == 0 };
        if !can {
            break false;
        }
        let next = if write { WRITER } else { seen + 1 };
        match x.state.compare_exchange_weak(seen, next, Ordering::SeqCst, Ordering::SeqCst) {
            Ok(_) => break true,
            Err(now) => seen = now,
        }
    };
    if got {
        if write {
            // Relaxed: only this thread sets it to itself and clears it.
            x.writer.store(sync_ops::me() + 1, Ordering::Relaxed);
        } else {
            add_my_read(r, 1);
        }
        serial_update(r, x.state.load(Ordering::Relaxed));
        record(rec, site, kind, r);
        return Ok(true);
    }
    match fail_kind {
        Some(k) => {
            record(rec, site, k, r);
            Ok(false)
        }
        None => Err(seen),
    }
}

/// A blocking acquisition (with an optional deadline, after which it fails with `fail_kind`).
fn acquire_waiting(r: *mut libc::pthread_rwlock_t, write: bool, site: u64, deadline: Option<Instant>) -> bool {
    let (kind, fail_kind) = if write { (EventKind::RwWrite, EventKind::RwTryWriteFail) } else { (EventKind::RwRead, EventKind::RwTryReadFail) };
    let x = rw(r);
    if let Ok(got) = try_get(r, write, site, kind, None) {
        return got;
    }
    // SeqCst (with the release's change of the state and its read of `waiters`): either the
    // release sees this waiter and wakes it, or this waiter sees the release's state.
    x.waiters.fetch_add(1, Ordering::SeqCst);
    let got = loop {
        let left = match deadline {
            None => Duration::from_secs(1),
            Some(d) => match d.checked_duration_since(Instant::now()) {
                Some(left) if !left.is_zero() => left,
                _ => break try_get(r, write, site, kind, Some(fail_kind)).unwrap_or(false),
            },
        };
        match try_get(r, write, site, kind, None) {
            Ok(got) => break got,
            // Sleeps only while the holders are still those seen.
            Err(seen) => crate::enforce::enforcer::blocking(|| crate::sync::futex::wait(&x.state, seen, left)),
        }
    };
    x.waiters.fetch_sub(1, Ordering::SeqCst);
    got
}

/// An acquisition in a serialised run: at its turn, when it can get in.
fn serial_acquire(r: *mut libc::pthread_rwlock_t, write: bool, site: u64) {
    let kind = if write { EventKind::RwWrite } else { EventKind::RwRead };
    loop {
        serial::acquire(Op::Lock(serial_name(r, write)));
        if let Ok(true) = try_get(r, write, site, kind, None) {
            return;
        }
        serial::locked(serial_name(r, write));
    }
}

/// How an acquisition waits when it cannot get in.
#[derive(Clone, Copy)]
enum Mode {
    Wait,
    Try,
    Timed(Option<Duration>),
}

fn acquire(r: *mut libc::pthread_rwlock_t, write: bool, mode: Mode, site: u64) -> c_int {
    let busy = if matches!(mode, Mode::Try) { libc::EBUSY } else { libc::ETIMEDOUT };
    if explore() {
        if rwlock_native::writer_preferring(r) {
            // Its waiting writer keeps new readers out: orders (and deadlocks: a reader asking
            // again behind a waiting writer) the readers-preferred model does not explore.
            scheduler::finish(shared_proto::explore_buffer::ChildOutcome::Unsupported(
                "a writer-preferring rwlock (PTHREAD_RWLOCK_PREFER_WRITER_NONRECURSIVE_NP): the exploration models readers-preferred rwlocks (glibc's default) only",
            ));
        }
        if scheduler::rwlock_relock(r as u64) {
            return libc::EDEADLK;
        }
        return match mode {
            Mode::Wait => {
                scheduler::rwlock_acquire(r as u64, write, site);
                0
            }
            _ => {
                if scheduler::rwlock_try(r as u64, write, site) { 0 } else { busy }
            }
        };
    }
    // Whether the caller is the writer needs no event: only the writer sets the field to
    // itself and clears it.
    if rw(r).writer.load(Ordering::Relaxed) == sync_ops::me() + 1 {
        return libc::EDEADLK;
    }
    let (kind, fail_kind) = match write {
        true => (EventKind::RwTryWrite, EventKind::RwTryWriteFail),
        false => (EventKind::RwTryRead, EventKind::RwTryReadFail),
    };
    match mode {
        Mode::Wait if serial::mine() => {
            serial_acquire(r, write, site);
            0
        }
        Mode::Wait => {
            enforced(site, || acquire_waiting(r, write, site, None));
            0
        }
        Mode::Timed(left) if !serial::mine() => {
            let deadline = Instant::now() + left.unwrap_or(Duration::ZERO);
            if enforced(site, || acquire_waiting(r, write, site, Some(deadline))) { 0 } else { busy }
        }
        _ => {
            if enforced(site, || try_get(r, write, site, kind, Some(fail_kind)).unwrap_or(false)) { 0 } else { busy }
        }
    }
}

fn release(r: *mut libc::pthread_rwlock_t, site: u64) -> c_int {
    if explore() {
        scheduler::rwlock_unlock(r as u64, site);
        return 0;
    }
    let x = rw(r);
    let (writer, reader) = (x.writer.load(Ordering::Relaxed) == sync_ops::me() + 1, my_reads(r) > 0);
    if !writer && !reader {
        return libc::EPERM;
    }
    enforced(site, || {
        let rec = recording().then(recorder::lock);
        // SeqCst: see `acquire_waiting` (and a release: the next holder sees this one's writes).
        let state = if writer {
            x.writer.store(0, Ordering::Relaxed);
            x.state.fetch_and(!WRITER, Ordering::SeqCst) & !WRITER
        } else {
            add_my_read(r, -1);
            x.state.fetch_sub(1, Ordering::SeqCst) - 1
        };
        serial_update(r, state);
        if x.waiters.load(Ordering::SeqCst) > 0 {
            crate::sync::futex::wake_all(&x.state);
        }
        record(rec, site, if writer { EventKind::RwWriteUnlock } else { EventKind::RwReadUnlock }, r);
    });
    0
}

fn timed(r: *mut libc::pthread_rwlock_t, write: bool, clock: libc::clockid_t, abstime: *const libc::timespec, site: u64) -> c_int {
    match sync_ops::time_left(clock, abstime) {
        Err(e) => e,
        Ok(left) => acquire(r, write, Mode::Timed(left), site),
    }
}

/// A C ABI entry point: forwarded unchanged to the C library's `$real` when nothing is watched
/// (OFF) and, for an acquisition or release (`native`), when the C library's rwlock runs this
/// one (`rwlock_native`); else `$body`.
macro_rules! forwarded {
    ($name:ident, $real:path, ($($arg:ident: $ty:ty),*), $body:expr) => {
        forwarded!(@ false, $name, $real, ($($arg: $ty),*), $body);
    };
    (native $name:ident, $real:path, ($($arg:ident: $ty:ty),*), $body:expr) => {
        forwarded!(@ true, $name, $real, ($($arg: $ty),*), $body);
    };
    (@ $native:expr, $name:ident, $real:path, ($($arg:ident: $ty:ty),*), $body:expr) => {
        /// # Safety
        /// Same contract as the pthread function it stands for.
        #[no_mangle]
        pub unsafe extern "C" fn $name(r: *mut libc::pthread_rwlock_t, $($arg: $ty,)* site: u64) -> c_int {
            if plain() || ($native && rwlock_native::applies(r)) {
                // SAFETY: forwarded unchanged.
                return unsafe { $real(r, $($arg),*) };
            }
            // Out of line: the forwarding path above stays a leaf with a small frame.
            #[inline(never)]
            fn irs_own(r: *mut libc::pthread_rwlock_t, $($arg: $ty,)* site: u64) -> c_int {
                let f: &dyn Fn(*mut libc::pthread_rwlock_t, u64) -> c_int = &$body;
                f(r, site)
            }
            irs_own(r, $($arg,)* site)
        }
    };
}

extern "C" {
    fn pthread_rwlock_clockrdlock(r: *mut libc::pthread_rwlock_t, clock: libc::clockid_t, abstime: *const libc::timespec) -> c_int;
    fn pthread_rwlock_clockwrlock(r: *mut libc::pthread_rwlock_t, clock: libc::clockid_t, abstime: *const libc::timespec) -> c_int;
    fn pthread_rwlock_timedrdlock(r: *mut libc::pthread_rwlock_t, abstime: *const libc::timespec) -> c_int;
    fn pthread_rwlock_timedwrlock(r: *mut libc::pthread_rwlock_t, abstime: *const libc::timespec) -> c_int;
}

forwarded!(native __irs_pthread_rwlock_rdlock, libc::pthread_rwlock_rdlock, (), |r, site| acquire(r, false, Mode::Wait, site));
forwarded!(native __irs_pthread_rwlock_wrlock, libc::pthread_rwlock_wrlock, (), |r, site| acquire(r, true, Mode::Wait, site));
forwarded!(native __irs_pthread_rwlock_tryrdlock, libc::pthread_rwlock_tryrdlock, (), |r, site| acquire(r, false, Mode::Try, site));
forwarded!(native __irs_pthread_rwlock_trywrlock, libc::pthread_rwlock_trywrlock, (), |r, site| acquire(r, true, Mode::Try, site));
forwarded!(native __irs_pthread_rwlock_timedrdlock, pthread_rwlock_timedrdlock, (abstime: *const libc::timespec), move |r, site| timed(r, false, libc::CLOCK_REALTIME, abstime, site));
forwarded!(native __irs_pthread_rwlock_timedwrlock, pthread_rwlock_timedwrlock, (abstime: *const libc::timespec), move |r, site| timed(r, true, libc::CLOCK_REALTIME, abstime, site));
forwarded!(native __irs_pthread_rwlock_clockrdlock, pthread_rwlock_clockrdlock, (clock: libc::clockid_t, abstime: *const libc::timespec), move |r, site| timed(r, false, clock, abstime, site));
forwarded!(native __irs_pthread_rwlock_clockwrlock, pthread_rwlock_clockwrlock, (clock: libc::clockid_t, abstime: *const libc::timespec), move |r, site| timed(r, true, clock, abstime, site));

forwarded!(native __irs_pthread_rwlock_unlock, libc::pthread_rwlock_unlock, (), release);

forwarded!(__irs_pthread_rwlock_init, libc::pthread_rwlock_init, (attr: *const libc::pthread_rwlockattr_t), |r, _site| {
    // Nobody holds it (no event: an init while threads use it is undefined in POSIX).
    // The C library's init, in every mode: it sets the kind in the lock, which says whose
    // rwlock runs it in a relaxed run and which ones the exploration refuses
    // (`rwlock_native`), and answers a bad attribute as the plain build does; irs's own state
    // is reset below.
    // SAFETY: the program's arguments, forwarded unchanged.
    let rc = unsafe { libc::pthread_rwlock_init(r, attr) };
    if rc != 0 {
        return rc;
    }
    if explore() {
        scheduler::rwlock_init(r as u64);
    } else {
        let x = rw(r);
        x.state.store(0, Ordering::Release);
        x.writer.store(0, Ordering::Relaxed);
        serial_update(r, 0);
    }
    0
});

forwarded!(__irs_pthread_rwlock_destroy, libc::pthread_rwlock_destroy, (), |r, _site| {
    // No thread may use it any more (POSIX): the runtime keeps nothing of it.
    if crate::enforce::relaxed::relaxed() {
        // SAFETY: forwarded unchanged (glibc's destroy checks nothing).
        unsafe { libc::pthread_rwlock_destroy(r) };
    }
    if !explore() {
        RWLOCKS.forget(r as u64);
        serial_update(r, 0);
    }
    0
});
