//! Semaphores under the scheduler (DESIGN §7; docs/src/synchronisation.md): each operation is
//! one event on the semaphore (`EventKind::Sem*`, object `ObjectRef::Sem`). A wait is a pending
//! operation enabled only while the count is above 0 (as a lock is while its mutex is free), so
//! a wait that would block is no event until a post lets it go; a trywait (and a timed wait,
//! whose timing EXPLORE does not model) takes one where the count is above 0 and fails where it
//! is 0. The counts are the scheduler's `sems`.
//!
//! It must never block the OS thread: a wait waits only as a pending operation.

use super::decision::{done, grant_op};
use super::{with, Scheduler};
use shared_proto::{EventKind, SiteId};

impl Scheduler {
    /// The count of the semaphore at `s` (0 for one never initialised).
    pub(super) fn sem_count(&self, s: u64) -> u32 {
        self.sems.iter().find(|&&(x, _)| x == s).map_or(0, |&(_, c)| c)
    }

    fn set_sem(&mut self, s: u64, count: u32) {
        match self.sems.iter_mut().find(|(x, _)| *x == s) {
            Some(e) => e.1 = count,
            None => self.sems.push((s, count)),
        }
    }
}

/// Wait for the turn of a semaphore operation of `kind` (`value`: the count of an init).
fn sem_op(kind: EventKind, s: u64, site: u64, value: u32) {
    let logical = with(|x| x.logical(s));
    grant_op(kind, Some(SiteId(site)), s, value, Some(logical));
}

/// `sem_init`: the count is `value` from now on.
pub fn sem_init(s: u64, value: u32, site: u64) {
    sem_op(EventKind::SemInit, s, site, value);
    with(|x| x.set_sem(s, value));
    done();
}

/// `sem_post`: one more (the caller checked the maximum).
pub fn sem_post(s: u64, site: u64) {
    sem_op(EventKind::SemPost, s, site, 0);
    with(|x| {
        let c = x.sem_count(s);
        x.set_sem(s, c + 1);
    });
    done();
}

/// `sem_wait`: granted once the count is above 0, it takes one.
pub fn sem_wait(s: u64, site: u64) {
    sem_op(EventKind::SemWait, s, site, 0);
    with(|x| {
        let c = x.sem_count(s);
        debug_assert!(c > 0, "a wait granted at count 0");
        x.set_sem(s, c.saturating_sub(1));
    });
    done();
}

/// `sem_trywait` (or a timed wait): takes one if the count is above 0 where it is granted.
/// Returns whether it did.
pub fn sem_trywait(s: u64, site: u64) -> bool {
    sem_op(EventKind::SemTryWait, s, site, 0);
    let got = with(|x| {
        let c = x.sem_count(s);
        x.set_sem(s, c.saturating_sub(1));
        c > 0
    });
    if !got {
        with(|x| {
            let me = x.current;
            if let Some(op) = x.threads[me].pending.as_mut() {
                op.kind = EventKind::SemTryFail;
            }
        });
    }
    done();
    got
}

/// `sem_getvalue`: the count where it is granted.
pub fn sem_getvalue(s: u64, site: u64) -> u32 {
    sem_op(EventKind::SemValue, s, site, 0);
    let c = with(|x| x.sem_count(s));
    done();
    c
}

/// The count of `s` now, without an event (a post at the maximum fails with no event, as the
/// C library's does).
pub fn sem_count_now(s: u64) -> u32 {
    with(|x| x.sem_count(s))
}
