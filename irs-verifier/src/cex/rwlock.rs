//! What an rwlock's operations need of conflicting extensions (000 §5.3, generalised; the model
//! is docs/src/synchronisation.md's): a read acquisition is enabled only where no writer holds
//! the lock, a write acquisition only where nobody does, and a try's result follows from the
//! holders where it is placed, as a lock is placed only where its mutex is free and a trylock's
//! result follows from it.
//!
//! Objects: an rwlock `l` has one copy per thread that reads it (under reads-commute, as a word
//! has per reader: `word_readers`, `object_table`): a reader's operation by `t` (an acquisition,
//! tried or not, got or not, and its release) is on `(l, t)` only, a writer's (acquisition,
//! tried or not, and release) on `l` and every copy. Two reader operations share no object (they
//! commute: a reader never disables or changes another reader's operation, readers being
//! preferred); a writer's shares one with every operation. Under Mazurkiewicz there are no
//! copies: every operation is on `l`.
//!
//! The holders where an event is placed (its predecessors `P_o` on its objects, in one
//! configuration): a writer holds it iff the last writer's operation on any of the chains (each
//! is on every object of the rwlock, so every walk meets the same one first) is an acquisition
//! that got in; the readers are the read acquisitions less the read releases since the last
//! writer's acquisition (nobody read then), each counted once (on its copy under reads-commute,
//! on `l` under Mazurkiewicz).

use crate::object_table::{ObjClass, ObjIdx, ObjectTable};
use crate::unfolding::{EventIdx, Unfolding};
use shared_proto::EventKind;

/// Whether a writer holds the rwlock after the events `preds[i]` on `objs[i]`, and how many
/// read acquisitions are not released there.
pub fn holders_after(u: &Unfolding, objects: &ObjectTable, objs: &[ObjIdx], preds: &[Option<EventIdx>]) -> (bool, i64) {
    let mut writer = None;
    let mut reads: Vec<(EventIdx, i64)> = Vec::new();
    for (&o, &p) in objs.iter().zip(preds).filter(|(&o, _)| objects.class(o) == ObjClass::Native) {
        let mut q = p;
        while let Some(e) = q {
            match u.event_kind(e) {
                EventKind::RwWrite | EventKind::RwTryWrite => {
                    writer.get_or_insert(true);
                    break;
                }
                EventKind::RwWriteUnlock => {
                    writer.get_or_insert(false);
                }
                EventKind::RwRead | EventKind::RwTryRead => reads.push((e, 1)),
                EventKind::RwReadUnlock => reads.push((e, -1)),
                _ => {}
            }
            q = u.pred(e, o);
        }
    }
    reads.sort_unstable_by_key(|&(e, _)| e);
    reads.dedup_by_key(|&mut (e, _)| e);
    (writer.unwrap_or(false), reads.iter().map(|&(_, d)| d).sum())
}

/// The kind an operation of action kind `kind` is where the holders are `(writer, readers)`, or
/// `None` where it cannot happen (an acquisition that would wait).
pub fn placed(kind: EventKind, (writer, readers): (bool, i64)) -> Option<EventKind> {
    let free = !writer && readers <= 0;
    match kind {
        EventKind::RwRead if writer => None,
        EventKind::RwWrite if !free => None,
        EventKind::RwTryRead | EventKind::RwTryReadFail => Some(if writer { EventKind::RwTryReadFail } else { EventKind::RwTryRead }),
        EventKind::RwTryWrite | EventKind::RwTryWriteFail => Some(if free { EventKind::RwTryWrite } else { EventKind::RwTryWriteFail }),
        k => Some(k),
    }
}
