//! Read-write locks under the scheduler (DESIGN §7; docs/src/synchronisation.md): each
//! acquisition and release is one event on the rwlock (`EventKind::Rw*`, object
//! `ObjectRef::RwLock`). A read acquisition is a pending operation enabled only while no writer
//! holds the lock (readers preferred, as glibc's default: a waiting writer does not keep new
//! readers out), a write acquisition only while nobody holds it; so an acquisition that would
//! block is no event until a release lets it in. A try (and a timed one, whose timing EXPLORE
//! does not model) gets in where it would be enabled and fails elsewhere. The holders are the
//! scheduler's `rwlocks`.
//!
//! It must never block the OS thread: an acquisition waits only as a pending operation.

use super::decision::{done, grant_op};
use super::{with, Scheduler};
use shared_proto::{EventKind, SiteId, ViolationKind};

/// Who holds an rwlock: its writer, and each reader with how many times it holds it.
#[derive(Clone, Debug, Default)]
pub(super) struct RwState {
    writer: Option<usize>,
    readers: Vec<(usize, u32)>,
}

impl RwState {
    fn reads(&self, t: usize) -> u32 {
        self.readers.iter().find(|&&(r, _)| r == t).map_or(0, |&(_, n)| n)
    }

    fn add_read(&mut self, t: usize, delta: i32) {
        match self.readers.iter().position(|&(r, _)| r == t) {
            Some(i) => {
                let n = (self.readers[i].1 as i32 + delta).max(0) as u32;
                if n == 0 {
                    self.readers.swap_remove(i);
                } else {
                    self.readers[i].1 = n;
                }
            }
            None if delta > 0 => self.readers.push((t, delta as u32)),
            None => {}
        }
    }
}

impl Scheduler {
    pub(super) fn rwlock(&self, r: u64) -> RwState {
        self.rwlocks.iter().find(|(x, _)| *x == r).map_or_else(RwState::default, |(_, st)| st.clone())
    }

    fn with_rwlock<T>(&mut self, r: u64, f: impl FnOnce(&mut RwState) -> T) -> T {
        let i = match self.rwlocks.iter().position(|(x, _)| *x == r) {
            Some(i) => i,
            None => {
                self.rwlocks.push((r, RwState::default()));
                self.rwlocks.len() - 1
            }
        };
        f(&mut self.rwlocks[i].1)
    }

    /// Whether an acquisition of `r` as `kind` may go now (a try always may).
    pub(super) fn rwlock_op_enabled(&self, r: u64, kind: EventKind) -> bool {
        let Some((_, st)) = self.rwlocks.iter().find(|(x, _)| *x == r) else { return true };
        match kind {
            EventKind::RwRead => st.writer.is_none(),
            EventKind::RwWrite => st.writer.is_none() && st.readers.is_empty(),
            _ => true,
        }
    }

    /// What a thread waiting for `r` waits for, for a deadlock's report.
    pub(super) fn describe_rwlock_wait(&self, r: u64, kind: EventKind) -> String {
        let st = self.rwlock(r);
        let held = match (st.writer, st.readers.len()) {
            (Some(w), _) => format!("held for writing by T{w}"),
            (None, n) => format!("held for reading by {n} thread(s): {}", st.readers.iter().map(|(t, _)| format!("T{t}")).collect::<Vec<_>>().join(", ")),
        };
        let how = if kind == EventKind::RwWrite { "writing" } else { "reading" };
        format!("rwlock {} for {how} ({held})", self.object_name(r))
    }
}

fn rw_op(kind: EventKind, r: u64, site: u64) {
    let logical = with(|x| x.logical(r));
    grant_op(kind, Some(SiteId(site)), r, 0, Some(logical));
}

/// What an acquisition by the calling thread gives before any event: `EDEADLK` for the writer
/// locking again (nothing another thread can see: no event).
pub fn rwlock_relock(r: u64) -> bool {
    with(|x| {
        let me = x.current;
        x.rwlock(r).writer == Some(me)
    })
}

/// `pthread_rwlock_rdlock` / `_wrlock`: granted once the lock can be had, it takes it.
pub fn rwlock_acquire(r: u64, write: bool, site: u64) {
    rw_op(if write { EventKind::RwWrite } else { EventKind::RwRead }, r, site);
    with(|x| {
        let me = x.current;
        x.with_rwlock(r, |st| if write { st.writer = Some(me) } else { st.add_read(me, 1) });
    });
    done();
}

/// A try (or timed) acquisition: takes the lock if it can be had where it is granted. Returns
/// whether it did.
pub fn rwlock_try(r: u64, write: bool, site: u64) -> bool {
    rw_op(if write { EventKind::RwTryWrite } else { EventKind::RwTryRead }, r, site);
    let got = with(|x| {
        let me = x.current;
        let can = x.rwlock_op_enabled(r, if write { EventKind::RwWrite } else { EventKind::RwRead });
        if can {
            x.with_rwlock(r, |st| if write { st.writer = Some(me) } else { st.add_read(me, 1) });
        } else if let Some(op) = x.threads[me].pending.as_mut() {
            op.kind = if write { EventKind::RwTryWriteFail } else { EventKind::RwTryReadFail };
        }
        can
    });
    done();
    got
}

/// `pthread_rwlock_unlock`: the writer's or one of the caller's reads. By a thread that holds
/// nothing it is undefined behaviour (POSIX; glibc takes it for a reader's release and corrupts
/// the lock): a violation, reported at the call (whether the caller holds the lock depends on
/// its own operations alone, so no event decides it). A run relaxed after a `safe` verdict
/// relies on it (`sync::rwlock_native`).
pub fn rwlock_unlock(r: u64, site: u64) {
    let kind = with(|x| {
        let me = x.current;
        let st = x.rwlock(r);
        if st.writer == Some(me) {
            Some(EventKind::RwWriteUnlock)
        } else if st.reads(me) > 0 {
            Some(EventKind::RwReadUnlock)
        } else {
            None
        }
    });
    let Some(kind) = kind else {
        let message = with(|x| format!("T{} unlocks rwlock {}, which it does not hold", x.current, x.object_name(r)));
        super::threads::violation(ViolationKind::Abort, &message);
    };
    rw_op(kind, r, site);
    with(|x| {
        let me = x.current;
        x.with_rwlock(r, |st| if kind == EventKind::RwWriteUnlock { st.writer = None } else { st.add_read(me, -1) });
    });
    done();
}

/// `pthread_rwlock_init` (no event): nobody holds it.
pub fn rwlock_init(r: u64) {
    with(|x| x.with_rwlock(r, |st| *st = RwState::default()));
}
