//! Whether a logical thread can move and, when none can, what each waits for (DESIGN §7): a
//! lock is enabled when the mutex is free, a semaphore's wait when its count is above 0, a barrier's arrival while its generation has room, an rwlock's read
//! acquisition while no writer holds it and a write acquisition while nobody does, a leave when the generation is
//! complete or released, a join when the joined thread has finished, the
//! process's end once per process. With no enabled thread left, the execution ends in a
//! deadlock, described thread by thread, or, when threads halted in watched loops, as the
//! [`spin_verdict`] says.
//!
//! Queries only: it must never change the scheduler's state or record anything.

use super::Scheduler;
use shared_proto::{sync_object, EventKind, SiteId};

impl Scheduler {
    pub(super) fn enabled(&self, t: usize) -> bool {
        let th = &self.threads[t];
        let Some(op) = th.pending.filter(|_| !th.finished) else { return false };
        match op.kind {
            EventKind::Lock => self.owner(op.addr).is_none(),
            EventKind::SemWait => self.sem_count(op.addr) > 0,
            EventKind::BarrierArrive | EventKind::BarrierRelease | EventKind::BarrierDepart => self.barrier_op_enabled(op.addr, op.kind, op.size),
            EventKind::RwRead | EventKind::RwWrite => self.rwlock_op_enabled(op.addr, op.kind),
            EventKind::Join => self.threads.get(op.addr as usize).is_some_and(|j| j.finished && !j.halted && !j.killed),
            // One end per process: a thread that calls `exit` after another waits for good.
            EventKind::End => self.ending.is_none(),
            _ => true,
        }
    }

    pub(super) fn describe_wait(&self, t: usize) -> Option<String> {
        let th = &self.threads[t];
        if th.spin_halted {
            let (at, _) = crate::program::program_info::site_text(SiteId(th.spin.loop_site().unwrap_or(0)));
            return Some(format!("T{t} spins at {at} (a loop whose iterations only read, and nothing it reads can change any more)"));
        }
        let op = th.pending?;
        Some(match op.kind {
            // A gate of a condition variable, semaphore, barrier or rwlock: waiting for what
            // would wake it (see `shared_proto::sync_object`).
            EventKind::Lock if sync_object::decode(op.addr).is_some_and(|(_, tag)| tag >= 0x100) => {
                format!("T{t} waits on {}", sync_object::describe(op.addr).unwrap_or_default())
            }
            EventKind::Lock => {
                let what = sync_object::describe(op.addr).unwrap_or_else(|| format!("mutex {}", self.object_name(op.addr)));
                match self.owner(op.addr) {
                    Some(owner) => format!("T{t} waits for {what} held by T{owner}"),
                    None => format!("T{t} waits for {what}"),
                }
            }
            EventKind::SemWait => format!("T{t} waits on semaphore {} (its count is 0)", self.object_name(op.addr)),
            EventKind::RwRead | EventKind::RwWrite => format!("T{t} waits for {}", self.describe_rwlock_wait(op.addr, op.kind)),
            EventKind::BarrierArrive => format!("T{t} waits to arrive at {} (its generation is complete, not yet released)", self.describe_barrier_wait(op.addr)),
            EventKind::BarrierRelease | EventKind::BarrierDepart => format!("T{t} waits at {}", self.describe_barrier_wait(op.addr)),
            EventKind::Join if self.threads.get(op.addr as usize).is_some_and(|j| j.spin_halted) => {
                format!("T{t} waits to join T{}, which spins", op.addr)
            }
            EventKind::Join if self.threads.get(op.addr as usize).is_some_and(|j| j.halted) => {
                format!("T{t} waits to join T{}, which stopped at a violation", op.addr)
            }
            EventKind::Join if self.threads.get(op.addr as usize).is_some_and(|j| j.killed) => {
                format!("T{t} waits to join T{}, which the process's end cut off", op.addr)
            }
            EventKind::Join => format!("T{t} waits to join T{}", op.addr),
            EventKind::End => format!("T{t} waits to end the process, which another thread is ending"),
            _ => format!("T{t} waits for {}", op.kind.name()),
        })
    }
}

/// How an execution in which threads halted in watched loops ends (`spin_watch`), when nothing
/// can move any more: `None` when no thread spins; discarded when some spinning thread's reads
/// were written after it read them (it would have moved: that is explored where the
/// write comes before its reads); otherwise the program hangs, a livelock, and the report
/// says where each thread spins or waits.
pub(super) fn spin_verdict(s: &Scheduler) -> Option<SpinEnd> {
    let spinners: Vec<usize> = (0..s.threads.len()).filter(|&t| s.threads[t].spin_halted).collect();
    if spinners.is_empty() {
        return None;
    }
    if spinners.iter().any(|&t| !s.threads[t].spin.unwritten_since_last(&s.writes)) {
        return Some(SpinEnd::Discarded);
    }
    // A thread blocked on a lock that a spinner's iteration releases for a while could have
    // taken it there: explored where its lock comes in that window, so no hang either.
    let blocked_on = |t: usize| s.threads[t].pending.filter(|op| !s.threads[t].finished && !s.threads[t].spin_halted && op.kind == EventKind::Lock).map(|op| op.addr);
    if (0..s.threads.len()).filter_map(blocked_on).any(|m| spinners.iter().any(|&sp| s.threads[sp].spin.releases(m))) {
        return Some(SpinEnd::Discarded);
    }
    // Where each thread spins, then what the others wait for.
    let blocked = (0..s.threads.len()).filter(|&t| !s.threads[t].finished);
    let waits: Vec<String> = spinners.iter().copied().chain(blocked).filter_map(|t| s.describe_wait(t)).collect();
    Some(SpinEnd::Hangs(waits.join("; ")))
}

/// See [`spin_verdict`].
pub(super) enum SpinEnd {
    Discarded,
    Hangs(String),
}
