//! Semaphores (DESIGN §3 "Objects and dependence"; docs/src/synchronisation.md): each operation
//! is one event on the semaphore (`EventKind::Sem*`, object `ObjectRef::Sem`), the same in
//! every mode but OFF:
//! - `sem_init` sets the count (the event carries it), `sem_post` adds one, `sem_wait` takes one
//!   once the count is above 0 (a wait that blocks is no event until a post lets it go),
//!   `sem_trywait` takes one or fails with `EAGAIN` (`SemTryFail`), a timed wait takes one or
//!   times out (EXPLORE: a trywait, as a timed lock is, since the exploration does not model
//!   time), `sem_getvalue` reads the count.
//! - EXPLORE: the scheduler keeps the counts and grants a wait only while its count is above 0
//!   (`explore::scheduler::semaphores`).
//! - ENFORCE, RECORD, chaos: a count in the runtime's table, taken with a compare-exchange and
//!   waited for on a futex, each operation inside its event's rules and recording; a post is
//!   recorded under the recorder's lock, so the wait that takes its unit is recorded after it.
//!   A serialised run gives a wait its turn only while the count is above 0 (the count's name
//!   is "held" for the serialisation while it is 0).
//!
//! Two posts commute (the exploration puts each on its thread's copy of the semaphore, the
//! requirement table never orders them); every other pair is dependent. Named semaphores
//! (`sem_open`) are not modelled.

use crate::enforce::event::{enforced, recording};
use crate::enforce::serial::{self, Op};
use crate::explore::scheduler;
use crate::mode::{explore, plain};
use crate::record::recorder;
use crate::sync::object_table::ObjectTable;
use shared_proto::sync_object::{self, SEM_LOCK};
use shared_proto::{EventKind, ObjectRef, SiteId};
use std::ffi::c_int;
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::{Duration, Instant};

/// A semaphore outside EXPLORE: its count, and how many threads wait for it to rise.
#[derive(Default)]
pub(super) struct Sem {
    count: AtomicU32,
    waiters: AtomicU32,
}

/// Used outside EXPLORE only (`super::outside_explore_tables`).
pub(super) static SEMS: ObjectTable<Sem> = ObjectTable::new();

fn sem(s: *mut libc::sem_t) -> &'static Sem {
    debug_assert!(!explore(), "a semaphore's table in EXPLORE (not restored between executions)");
    SEMS.get(s as u64)
}

/// The name a serialised run keeps "held" while the count is 0.
fn serial_name(s: *mut libc::sem_t) -> usize {
    sync_object::sub(s as u64, SEM_LOCK) as usize
}

fn fail(e: c_int) -> c_int {
    // SAFETY: errno of this thread.
    unsafe { *libc::__errno_location() = e };
    -1
}

fn record(site: u64, kind: EventKind, s: *mut libc::sem_t, value: u32) {
    push(&mut recorder::lock(), site, kind, s, value);
}

/// Record an operation under the recorder's lock `r`, already held.
fn push(r: &mut recorder::RecorderState, site: u64, kind: EventKind, s: *mut libc::sem_t, value: u32) {
    r.push(Some(SiteId(site)), kind, ObjectRef::Sem { addr: s as u64, logical: None, value });
}

/// Take one if the count is above 0.
fn try_take(x: &Sem) -> bool {
    let mut v = x.count.load(Ordering::Relaxed);
    while v > 0 {
        // AcqRel: a wait synchronises with the post whose unit it takes (the program's data
        // written before the post is visible after the wait), and a take is seen by the next.
        match x.count.compare_exchange_weak(v, v - 1, Ordering::AcqRel, Ordering::Relaxed) {
            Ok(_) => return true,
            Err(now) => v = now,
        }
    }
    false
}

/// Take one, waiting as long as it takes or until `deadline`. Returns whether it took one.
fn take_waiting(x: &Sem, deadline: Option<Instant>) -> bool {
    if try_take(x) {
        return true;
    }
    // SeqCst (with the post's increment and its read of `waiters`): either the post sees this
    // waiter and wakes it, or this waiter sees the post's unit before it sleeps.
    x.waiters.fetch_add(1, Ordering::SeqCst);
    let got = loop {
        if try_take(x) {
            break true;
        }
        let left = match deadline {
            None => Duration::from_secs(1),
            Some(d) => match d.checked_duration_since(Instant::now()) {
                Some(left) if !left.is_zero() => left,
                _ => break false,
            },
        };
        // Sleeps only while the count is still 0.
        crate::enforce::enforcer::blocking(|| crate::sync::futex::wait(&x.count, 0, left));
    };
    x.waiters.fetch_sub(1, Ordering::SeqCst);
    got
}

/// A wait in a serialised run: at its turn with the count above 0 (a count found 0 makes the
/// semaphore "held" for the serialisation until a post).
fn serial_wait(s: *mut libc::sem_t, site: u64) -> c_int {
    let (x, name) = (sem(s), serial_name(s));
    loop {
        serial::acquire(Op::Lock(name));
        if try_take(x) {
            if recording() {
                record(site, EventKind::SemWait, s, 0);
            }
            return 0;
        }
        serial::locked(name);
    }
}

/// `sem_trywait`, or a timed wait with `deadline` (outside EXPLORE).
fn try_or_timed(s: *mut libc::sem_t, site: u64, deadline: Option<Instant>, err: c_int) -> c_int {
    if explore() {
        return if scheduler::sem_trywait(s as u64, site) { 0 } else { fail(err) };
    }
    let x = sem(s);
    let got = enforced(site, || {
        let waited = match deadline {
            Some(d) if !serial::mine() => take_waiting(x, Some(d)),
            _ => false,
        };
        if !recording() {
            return waited || (deadline.is_none() || serial::mine()) && try_take(x);
        }
        if waited {
            // It took a unit a post put there, and that post was recorded as it put it (under
            // the recorder's lock): recorded after it.
            record(site, EventKind::SemTryWait, s, 0);
            return true;
        }
        // A failure is decided and recorded under the recorder's lock, which a post holds while
        // it adds its unit: a post that comes between would otherwise be recorded before a
        // failure that did not see it, and a prefix made of the trace would make the trywait
        // succeed (found by chaos runs under such a prefix). A timed wait that timed out tries
        // once more there.
        let mut r = recorder::lock();
        let got = try_take(x);
        push(&mut r, site, if got { EventKind::SemTryWait } else { EventKind::SemTryFail }, s, 0);
        got
    });
    if got { 0 } else { fail(err) }
}

/// # Safety
/// Same contract as `sem_init`.
#[no_mangle]
pub unsafe extern "C" fn __irs_sem_init(s: *mut libc::sem_t, pshared: c_int, value: u32, site: u64) -> c_int {
    if plain() {
        // SAFETY: forwarded unchanged.
        return unsafe { libc::sem_init(s, pshared, value) };
    }
    if value > i32::MAX as u32 {
        return fail(libc::EINVAL);
    }
    if explore() {
        scheduler::sem_init(s as u64, value, site);
        return 0;
    }
    enforced(site, || {
        let rec = recording().then(recorder::lock);
        // Release: with the init recorded before any operation that sees the count.
        sem(s).count.store(value, Ordering::Release);
        if serial::on() {
            if value == 0 {
                serial::locked(serial_name(s));
            } else {
                serial::unlocked(serial_name(s));
            }
        }
        if let Some(mut r) = rec {
            push(&mut r, site, EventKind::SemInit, s, value);
        }
    });
    0
}

/// # Safety
/// Same contract as `sem_destroy`.
#[no_mangle]
pub unsafe extern "C" fn __irs_sem_destroy(s: *mut libc::sem_t, _site: u64) -> c_int {
    if plain() {
        // SAFETY: forwarded unchanged.
        return unsafe { libc::sem_destroy(s) };
    }
    // No thread may use it any more (POSIX): the runtime keeps nothing of it.
    if !explore() {
        SEMS.forget(s as u64);
        if serial::on() {
            serial::unlocked(serial_name(s));
        }
    }
    0
}

/// # Safety
/// Same contract as `sem_wait`.
#[no_mangle]
pub unsafe extern "C" fn __irs_sem_wait(s: *mut libc::sem_t, site: u64) -> c_int {
    if plain() {
        // SAFETY: forwarded unchanged.
        return unsafe { libc::sem_wait(s) };
    }
    if explore() {
        scheduler::sem_wait(s as u64, site);
        return 0;
    }
    if serial::mine() {
        return serial_wait(s, site);
    }
    let x = sem(s);
    enforced(site, || {
        take_waiting(x, None);
        if recording() {
            record(site, EventKind::SemWait, s, 0);
        }
    });
    0
}

/// # Safety
/// Same contract as `sem_trywait`.
#[no_mangle]
pub unsafe extern "C" fn __irs_sem_trywait(s: *mut libc::sem_t, site: u64) -> c_int {
    if plain() {
        // SAFETY: forwarded unchanged.
        return unsafe { libc::sem_trywait(s) };
    }
    try_or_timed(s, site, None, libc::EAGAIN)
}

fn timed(s: *mut libc::sem_t, clock: libc::clockid_t, abstime: *const libc::timespec, site: u64) -> c_int {
    match crate::sync::sync_ops::time_left(clock, abstime) {
        Err(e) => fail(e),
        Ok(left) => try_or_timed(s, site, Some(Instant::now() + left.unwrap_or(Duration::ZERO)), libc::ETIMEDOUT),
    }
}

/// # Safety
/// Same contract as `sem_timedwait`.
#[no_mangle]
pub unsafe extern "C" fn __irs_sem_timedwait(s: *mut libc::sem_t, abstime: *const libc::timespec, site: u64) -> c_int {
    if plain() {
        // SAFETY: forwarded unchanged.
        return unsafe { libc::sem_timedwait(s, abstime) };
    }
    timed(s, libc::CLOCK_REALTIME, abstime, site)
}

extern "C" {
    fn sem_clockwait(s: *mut libc::sem_t, clock: libc::clockid_t, abstime: *const libc::timespec) -> c_int;
}

/// # Safety
/// Same contract as `sem_clockwait`.
#[no_mangle]
pub unsafe extern "C" fn __irs_sem_clockwait(s: *mut libc::sem_t, clock: libc::clockid_t, abstime: *const libc::timespec, site: u64) -> c_int {
    if plain() {
        // SAFETY: forwarded unchanged.
        return unsafe { sem_clockwait(s, clock, abstime) };
    }
    timed(s, clock, abstime, site)
}

/// # Safety
/// Same contract as `sem_post`.
#[no_mangle]
pub unsafe extern "C" fn __irs_sem_post(s: *mut libc::sem_t, site: u64) -> c_int {
    if plain() {
        // SAFETY: forwarded unchanged.
        return unsafe { libc::sem_post(s) };
    }
    if explore() {
        // At the maximum a post fails (no event), as the C library's does.
        if with_explore_count(s) >= i32::MAX as u32 {
            return fail(libc::EOVERFLOW);
        }
        scheduler::sem_post(s as u64, site);
        return 0;
    }
    let x = sem(s);
    let posted = enforced(site, || {
        // Under the recorder's lock: the wait that takes this unit is recorded after it.
        let rec = recording().then(recorder::lock);
        // SeqCst: see `take_waiting`.
        let posted = x.count.fetch_update(Ordering::SeqCst, Ordering::SeqCst, |c| (c < i32::MAX as u32).then_some(c + 1)).is_ok();
        if posted {
            if x.waiters.load(Ordering::SeqCst) > 0 {
                crate::sync::futex::wake_all(&x.count);
            }
            if serial::on() {
                serial::unlocked(serial_name(s));
            }
        }
        if let (true, Some(mut r)) = (posted, rec) {
            push(&mut r, site, EventKind::SemPost, s, 0);
        }
        posted
    });
    if posted { 0 } else { fail(libc::EOVERFLOW) }
}

/// The count EXPLORE keeps for `s` (read without an event: only to refuse an overflowing post).
fn with_explore_count(s: *mut libc::sem_t) -> u32 {
    scheduler::sem_count_now(s as u64)
}

/// # Safety
/// Same contract as `sem_getvalue`.
#[no_mangle]
pub unsafe extern "C" fn __irs_sem_getvalue(s: *mut libc::sem_t, value: *mut c_int, site: u64) -> c_int {
    if plain() {
        // SAFETY: forwarded unchanged.
        return unsafe { libc::sem_getvalue(s, value) };
    }
    let v = if explore() {
        scheduler::sem_getvalue(s as u64, site)
    } else {
        enforced(site, || {
            // Read under the recorder's lock when recording, as a post adds its unit under it:
            // the trace's order of the two is the order in which they happened.
            let rec = recording().then(recorder::lock);
            let v = sem(s).count.load(Ordering::Acquire);
            if let Some(mut r) = rec {
                push(&mut r, site, EventKind::SemValue, s, 0);
            }
            v
        })
    };
    if !value.is_null() {
        // SAFETY: the caller's out-parameter.
        unsafe { *value = v as c_int };
    }
    0
}
