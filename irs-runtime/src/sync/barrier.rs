//! Barriers (DESIGN §3 "Objects and dependence"; docs/src/synchronisation.md): each
//! `pthread_barrier_wait` is two events on the barrier (`EventKind::Barrier*`, object
//! `ObjectRef::Barrier`), the same in every mode but OFF: the thread arrives (`BarrierArrive`),
//! then leaves, either as the thread that releases its generation (`BarrierRelease`: every
//! thread of it has arrived and nobody released it; it returns `PTHREAD_BARRIER_SERIAL_THREAD`)
//! or as one that departs from a released generation (`BarrierDepart`, returning 0).
//! - EXPLORE: the scheduler keeps the state and explores which waiting thread releases
//!   (`explore::scheduler::barriers`).
//! - ENFORCE, RECORD, chaos: the state under a runtime lock, the generation's number waited for
//!   on a futex, each half inside its event's rules and recording; an arrival and a release are
//!   recorded under the recorder's lock, so a release is recorded after every arrival it
//!   needed, and a departure after the release. A serialised run gives a leave its turn only
//!   once its generation is complete (the generation's name is "held" for the serialisation
//!   until then).
//!
//! An arrival while a generation is complete and not yet released waits for the release and
//! arrives in the next generation, as the C library's would (there the last arrival releases at
//! once). Its event carries the barrier's count.
//!
//! Two arrivals commute, and so do two departures, and an arrival and a departure (the
//! exploration puts each on its thread's copy of the barrier); a release is dependent with all
//! of them. A barrier short of a thread is a deadlock, reported with the threads waiting at it.

use crate::enforce::event::{enforced, recording};
use crate::enforce::serial::{self, Op};
use crate::explore::scheduler;
use crate::mode::{explore, plain};
use crate::record::recorder;
use crate::sync::object_table::ObjectTable;
use parking_lot::Mutex;
use shared_proto::sync_object;
use shared_proto::{EventKind, ObjectRef, SiteId};
use std::ffi::{c_int, c_uint};
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::Duration;

/// A barrier outside EXPLORE: (threads it waits for, arrivals in the current generation) under
/// a runtime lock, and the current generation's number (waited on with a futex).
#[derive(Default)]
pub(super) struct Barrier {
    state: Mutex<(u32, u32)>,
    generation: AtomicU32,
}

/// Used outside EXPLORE only (`super::outside_explore_tables`).
pub(super) static BARRIERS: ObjectTable<Barrier> = ObjectTable::new();

fn barrier(b: *mut libc::pthread_barrier_t) -> &'static Barrier {
    debug_assert!(!crate::mode::explore(), "a barrier's table in EXPLORE (not restored between executions)");
    BARRIERS.get(b as u64)
}

/// The name a serialised run keeps "held" until generation `g` is complete.
fn serial_name(b: *mut libc::pthread_barrier_t, g: u32) -> usize {
    sync_object::sub(b as u64, sync_object::barrier_generation(g)) as usize
}

/// The name a serialised run keeps "held" from generation `g`'s last arrival to its release.
fn serial_full(b: *mut libc::pthread_barrier_t, g: u32) -> usize {
    sync_object::sub(b as u64, sync_object::barrier_full(g)) as usize
}

fn push(r: &mut recorder::RecorderState, site: u64, kind: EventKind, b: *mut libc::pthread_barrier_t, value: u32) {
    r.push(Some(SiteId(site)), kind, ObjectRef::Barrier { addr: b as u64, logical: None, value });
}

/// # Safety
/// Same contract as `pthread_barrier_init`.
#[no_mangle]
pub unsafe extern "C" fn __irs_pthread_barrier_init(b: *mut libc::pthread_barrier_t, attr: *const libc::pthread_barrierattr_t, count: c_uint, site: u64) -> c_int {
    if plain() {
        // SAFETY: forwarded unchanged.
        return unsafe { libc::pthread_barrier_init(b, attr, count) };
    }
    if count == 0 {
        return libc::EINVAL;
    }
    if explore() {
        scheduler::barrier_init(b as u64, count, site);
        return 0;
    }
    let x = barrier(b);
    enforced(site, || {
        let mut rec = recording().then(recorder::lock);
        *x.state.lock() = (count, 0);
        // Release: a new generation, after the state it counts in.
        let g = x.generation.fetch_add(1, Ordering::Release).wrapping_add(1);
        if serial::on() {
            serial::locked(serial_name(b, g));
        }
        if let Some(r) = rec.as_mut() {
            push(r, site, EventKind::BarrierInit, b, count);
        }
    });
    0
}

/// # Safety
/// Same contract as `pthread_barrier_destroy`.
#[no_mangle]
pub unsafe extern "C" fn __irs_pthread_barrier_destroy(b: *mut libc::pthread_barrier_t, _site: u64) -> c_int {
    if plain() {
        // SAFETY: forwarded unchanged.
        return unsafe { libc::pthread_barrier_destroy(b) };
    }
    // No thread may use it any more (POSIX): the runtime keeps nothing of it, nor does a
    // serialised run (the current generation's names).
    if !explore() {
        if serial::on() {
            let g = barrier(b).generation.load(Ordering::Acquire);
            serial::unlocked(serial_name(b, g));
            serial::unlocked(serial_full(b, g));
        }
        BARRIERS.forget(b as u64);
    }
    0
}

/// Leave generation `g` if it may: `Some(rc)` (released by this thread, or departed from a
/// released one), or `None` while it is incomplete.
fn try_leave(x: &Barrier, b: *mut libc::pthread_barrier_t, g: u32, site: u64) -> Option<c_int> {
    let mut rec = recording().then(recorder::lock);
    let mut st = x.state.lock();
    // Acquire: a departure sees what the threads of its generation did before they arrived.
    if x.generation.load(Ordering::Acquire) != g {
        drop(st);
        if let Some(r) = rec.as_mut() {
            push(r, site, EventKind::BarrierDepart, b, g);
        }
        return Some(0);
    }
    if st.1 < st.0 {
        return None;
    }
    st.1 = 0;
    // Release: pairs with the departures' acquire load.
    x.generation.store(g.wrapping_add(1), Ordering::Release);
    drop(st);
    crate::sync::futex::wake_all(&x.generation);
    if serial::on() {
        serial::unlocked(serial_name(b, g));
        serial::unlocked(serial_full(b, g));
        serial::locked(serial_name(b, g.wrapping_add(1)));
    }
    if let Some(r) = rec.as_mut() {
        push(r, site, EventKind::BarrierRelease, b, g);
    }
    Some(libc::PTHREAD_BARRIER_SERIAL_THREAD)
}

/// # Safety
/// Same contract as `pthread_barrier_wait`.
#[no_mangle]
pub unsafe extern "C" fn __irs_pthread_barrier_wait(b: *mut libc::pthread_barrier_t, site: u64) -> c_int {
    if plain() {
        // SAFETY: forwarded unchanged.
        return unsafe { libc::pthread_barrier_wait(b) };
    }
    if explore() {
        return match scheduler::barrier_wait(b as u64, site) {
            None => libc::EINVAL,
            Some(true) => libc::PTHREAD_BARRIER_SERIAL_THREAD,
            Some(false) => 0,
        };
    }
    let x = barrier(b);
    if x.state.lock().0 == 0 {
        // Not initialised.
        return libc::EINVAL;
    }
    // A thread that arrives while a generation is complete and not yet released belongs to
    // the next one (POSIX: more threads than the count may use a barrier): it waits for the
    // release first, at its turn in a serialised run.
    if serial::mine() {
        loop {
            let (count, arrived) = *x.state.lock();
            if arrived < count {
                break;
            }
            serial::acquire(Op::Lock(serial_full(b, x.generation.load(Ordering::Acquire))));
        }
    }
    let g = enforced(site, || loop {
        let mut rec = recording().then(recorder::lock);
        let mut st = x.state.lock();
        let g = x.generation.load(Ordering::Acquire);
        if st.1 >= st.0 {
            drop(st);
            drop(rec);
            crate::enforce::enforcer::blocking(|| crate::sync::futex::wait(&x.generation, g, Duration::from_secs(1)));
            continue;
        }
        st.1 += 1;
        let (count, full) = (st.0, st.1 >= st.0);
        if serial::on() && full {
            serial::unlocked(serial_name(b, g));
            serial::locked(serial_full(b, g));
        }
        drop(st);
        if let Some(r) = rec.as_mut() {
            push(r, site, EventKind::BarrierArrive, b, count);
        }
        break g;
    });
    if serial::mine() {
        // At its turn once the generation is complete (or released).
        loop {
            serial::acquire(Op::Lock(serial_name(b, g)));
            if let Some(rc) = try_leave(x, b, g, site) {
                return rc;
            }
            serial::locked(serial_name(b, g));
        }
    }
    enforced(site, || loop {
        if let Some(rc) = try_leave(x, b, g, site) {
            return rc;
        }
        // Sleeps only while the generation is still `g`.
        crate::enforce::enforcer::blocking(|| crate::sync::futex::wait(&x.generation, g, Duration::from_secs(1)));
    })
}
