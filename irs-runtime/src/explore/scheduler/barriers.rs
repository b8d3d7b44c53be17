//! Barriers under the scheduler (DESIGN §7; docs/src/synchronisation.md): `pthread_barrier_wait`
//! is two events, an arrival (`BarrierArrive`, always enabled) and a leave: the thread that
//! releases its generation (`BarrierRelease`, enabled once every thread of the generation has
//! arrived and nobody has released it; it returns `PTHREAD_BARRIER_SERIAL_THREAD`) or one that
//! departs from a released generation (`BarrierDepart`, returning 0). Which of the waiting
//! threads releases is explored: once the last thread arrives, each of them is enabled as a
//! release (their pending operations say so), and when one releases, the others' become
//! departures. A generation is counted by the barrier's own number, carried in the pending
//! operation's `size` (and the event's `value`).
//!
//! More threads than the count may use a barrier: POSIX puts a thread that arrives once its
//! generation is complete into the next one. The release and the last arrival are one step in
//! the C library; here they are two events, so an arrival is disabled from the generation's
//! last arrival until its release (it then arrives in the next generation), exactly the orders
//! the C library allows. Its event carries the barrier's count (`value`), from which the
//! verifier learns that more threads than that use it (`irs-verifier/src/cex/barrier.rs`).
//!
//! It must never block the OS thread: a leave waits only as a pending operation.

use super::decision::{done, grant_op};
use super::{with, Scheduler};
use shared_proto::{EventKind, SiteId};

/// A barrier: the threads it waits for, the arrivals in the current generation, and the
/// generation's number.
#[derive(Clone, Copy, Debug, Default)]
pub(super) struct BarrierState {
    count: u32,
    arrived: u32,
    generation: u32,
}

impl Scheduler {
    pub(super) fn barrier(&self, b: u64) -> BarrierState {
        self.barriers.iter().find(|&&(x, _)| x == b).map_or_else(BarrierState::default, |&(_, st)| st)
    }

    fn set_barrier(&mut self, b: u64, st: BarrierState) {
        match self.barriers.iter_mut().find(|(x, _)| *x == b) {
            Some(e) => e.1 = st,
            None => self.barriers.push((b, st)),
        }
    }

    /// Whether `b`'s operation `kind` may go now: an arrival while its generation has room, a
    /// leave of generation `generation` (the operation's `size`) once it is complete (a
    /// release) or released (a departure).
    pub(super) fn barrier_op_enabled(&self, b: u64, kind: EventKind, generation: u32) -> bool {
        let st = self.barrier(b);
        match kind {
            EventKind::BarrierArrive => st.arrived < st.count,
            EventKind::BarrierRelease => st.generation == generation && st.arrived >= st.count,
            _ => st.generation != generation,
        }
    }

    /// What a thread waiting at `b` waits for, for a deadlock's report.
    pub(super) fn describe_barrier_wait(&self, b: u64) -> String {
        let st = self.barrier(b);
        format!("barrier {} for the other threads ({} of {} arrived)", self.object_name(b), st.arrived, st.count)
    }

    /// Every thread waiting to leave generation `generation` of `b` is a `kind` now (but the
    /// running one, whose leave is granted).
    fn waiters_are(&mut self, b: u64, generation: u32, kind: EventKind) {
        let me = self.current;
        for (t, th) in self.threads.iter_mut().enumerate() {
            if t == me {
                continue;
            }
            if let Some(op) = th.pending.as_mut() {
                if op.addr == b && op.size == generation && matches!(op.kind, EventKind::BarrierRelease | EventKind::BarrierDepart) {
                    op.kind = kind;
                }
            }
        }
    }
}

fn barrier_op(kind: EventKind, b: u64, site: u64, value: u32) {
    let logical = with(|x| x.logical(b));
    grant_op(kind, Some(SiteId(site)), b, value, Some(logical));
}

/// `pthread_barrier_init` with `count` (> 0) threads.
pub fn barrier_init(b: u64, count: u32, site: u64) {
    barrier_op(EventKind::BarrierInit, b, site, count);
    with(|x| {
        let generation = x.barrier(b).generation.wrapping_add(1);
        x.set_barrier(b, BarrierState { count, arrived: 0, generation });
    });
    done();
}

/// `pthread_barrier_wait`; `None` for a barrier never initialised (`EINVAL`, no event), else
/// whether this thread released its generation.
pub fn barrier_wait(b: u64, site: u64) -> Option<bool> {
    if with(|x| x.barrier(b).count) == 0 {
        return None;
    }
    // Disabled while the generation is complete and not yet released.
    let count = with(|x| x.barrier(b).count);
    barrier_op(EventKind::BarrierArrive, b, site, count);
    let (generation, complete) = with(|x| {
        let mut st = x.barrier(b);
        st.arrived += 1;
        x.set_barrier(b, st);
        (st.generation, st.arrived == st.count)
    });
    if complete {
        with(|x| x.waiters_are(b, generation, EventKind::BarrierRelease));
    }
    done();
    // Disabled until the generation is complete (then a release) or released (a departure).
    let kind = if with(|x| x.barrier(b).generation) == generation { EventKind::BarrierRelease } else { EventKind::BarrierDepart };
    barrier_op(kind, b, site, generation);
    let released = with(|x| {
        let me = x.current;
        let kind = x.threads[me].pending.map(|op| op.kind);
        if kind != Some(EventKind::BarrierRelease) {
            return false;
        }
        let mut st = x.barrier(b);
        st.arrived = 0;
        st.generation = st.generation.wrapping_add(1);
        x.set_barrier(b, st);
        x.waiters_are(b, generation, EventKind::BarrierDepart);
        true
    });
    done();
    Some(released)
}
