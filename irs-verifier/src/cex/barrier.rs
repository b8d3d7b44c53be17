//! What a barrier's operations need of conflicting extensions (000 §5.3, generalised; the model
//! is docs/src/synchronisation.md's): a release is enabled only where every thread of its
//! generation has arrived and nobody released it, a departure only where its generation is
//! released, as a lock is placed only where its mutex is free.
//!
//! Objects: a barrier `b` has one copy per thread that waits at it (under reads-commute, as a
//! word has per reader: `word_readers`, `object_table`): an arrival and a departure by `t` are
//! on `(b, t)` only, an init and a release on `b` and every copy. Two arrivals, two departures,
//! an arrival and a departure share no object (they commute: none disables or changes another
//! while each thread waits in a generation of its own, which the runtime checks: a generation
//! with more arrivals than the count is unsupported); a release shares one with each of them.
//! Under Mazurkiewicz there are no copies: every operation is on `b`.
//!
//! Where an event is placed (its predecessors `P_o` on its objects, in one configuration): the
//! arrivals since the last release are those on each object's chain up to `P_o` back to a
//! release or an init (both on every object, so each walk stops at the same one); the count is
//! the last init's, on `b`'s chain; a departure's generation is released iff, walking back its
//! thread's copy (or `b`), a release comes before the thread's own arrival.

use crate::object_table::{ObjClass, ObjIdx, ObjectTable};
use crate::thread_names::StableThread;
use crate::unfolding::{EventIdx, Unfolding};
use shared_proto::EventKind;

/// The generation in which an operation placed after `preds[i]` on `objs[i]` would be: the
/// barrier's count (from the last init, on the barrier's own chain; `None` without one there)
/// and the distinct arrivals since the last release. Under reads-commute an arrival is on one
/// copy; ordered (Mazurkiewicz, or more threads than the count), on the barrier and every copy:
/// counted once either way.
fn generation(u: &Unfolding, objects: &ObjectTable, objs: &[ObjIdx], preds: &[Option<EventIdx>]) -> (Option<u32>, usize) {
    let mut count = None;
    let mut arrivals: Vec<EventIdx> = Vec::new();
    for (&o, &p) in objs.iter().zip(preds).filter(|(&o, _)| objects.class(o) == ObjClass::Native) {
        let mut q = p;
        let mut counting = true;
        while let Some(e) = q {
            match u.event_kind(e) {
                EventKind::BarrierInit => {
                    if !objects.is_copy(o) {
                        count = Some(u.action_of(e).choice);
                    }
                    break;
                }
                EventKind::BarrierRelease => {
                    counting = false;
                    if objects.is_copy(o) || count.is_some() {
                        break;
                    }
                }
                EventKind::BarrierArrive if counting => arrivals.push(e),
                _ => {}
            }
            q = u.pred(e, o);
        }
    }
    arrivals.sort_unstable();
    arrivals.dedup();
    (count, arrivals.len())
}

/// Whether an operation of kind `kind` by thread `t` may happen after the events `preds[i]` on
/// `objs[i]`: a release where its generation is complete, a departure where it is released, an
/// arrival on the barrier itself (ordered arrivals) where its generation has room (on a copy
/// only, or an init: always).
pub fn enabled(u: &Unfolding, objects: &ObjectTable, objs: &[ObjIdx], preds: &[Option<EventIdx>], kind: EventKind, t: StableThread) -> bool {
    let native = || objs.iter().zip(preds).filter(|(&o, _)| objects.class(o) == ObjClass::Native);
    match kind {
        EventKind::BarrierRelease => {
            let (count, arrived) = generation(u, objects, objs, preds);
            count.is_some_and(|n| arrived >= n as usize)
        }
        EventKind::BarrierArrive if native().any(|(&o, _)| !objects.is_copy(o)) => {
            let (count, arrived) = generation(u, objects, objs, preds);
            count.is_none_or(|n| arrived < n as usize)
        }
        EventKind::BarrierDepart => native().any(|(&o, &p)| {
            let mut q = p;
            while let Some(e) = q {
                match u.event_kind(e) {
                    EventKind::BarrierRelease => return true,
                    EventKind::BarrierArrive if u.thread(e) == t => return false,
                    _ => {}
                }
                q = u.pred(e, o);
            }
            false
        }),
        _ => true,
    }
}
