//! What a semaphore's operations need of conflicting extensions (000 §5.3, generalised; the
//! model is docs/src/synchronisation.md's): a wait is enabled only where the count is above 0,
//! and a trywait's result follows from the count where it is placed, as a lock is placed only
//! where its mutex is free and a trylock's result follows from it.
//!
//! Objects: a semaphore `s` has one copy per thread that posts it (under reads-commute, as a
//! word has per reader: `word_readers`, `object_table`): a post by `t` is on `(s, t)` only,
//! every other operation (init, wait, trywait, getvalue) on `s` and every copy. Two posts share
//! no object (they commute: either order leaves the same count and disables nothing); every
//! other pair shares one. Under Mazurkiewicz there are no copies: every operation is on `s`.
//!
//! The count where an event is placed (its predecessors `P_o` on its objects, in one
//! configuration) is the last init's value, plus the posts, minus the waits that took one, in
//! the union of the `[P_o]`: the takes are on `s`, so `s`'s chain up to `P_s` holds every one
//! of them; each post is on its copy (or on `s`), whose chain up to `P_o` holds every post of
//! that thread in the history; and an init is on every object of the semaphore, so each walk
//! stops at the same one (the placements agree: see `product`). A semaphore never initialised
//! counts from 0.

use crate::object_table::{ObjClass, ObjIdx, ObjectTable};
use crate::unfolding::{EventIdx, Unfolding};
use shared_proto::EventKind;

/// The count after the events `preds[i]` on `objs[i]` (the objects of a semaphore operation
/// and its thread's own; only those of class [`ObjClass::Native`] are read).
pub fn count_after(u: &Unfolding, objects: &ObjectTable, objs: &[ObjIdx], preds: &[Option<EventIdx>]) -> i64 {
    let mut count = 0i64;
    for (&o, &p) in objs.iter().zip(preds) {
        if objects.class(o) != ObjClass::Native {
            continue;
        }
        let shared = !objects.is_copy(o);
        let mut q = p;
        while let Some(e) = q {
            match u.event_kind(e) {
                EventKind::SemInit => {
                    if shared {
                        count += u.action_of(e).choice as i64;
                    }
                    break;
                }
                EventKind::SemPost => count += 1,
                EventKind::SemWait | EventKind::SemTryWait if shared => count -= 1,
                _ => {}
            }
            q = u.pred(e, o);
        }
    }
    count
}

/// The kind an operation of action kind `kind` is where the count is `count`, or `None` where it
/// cannot happen (a wait at 0).
pub fn placed(kind: EventKind, count: i64) -> Option<EventKind> {
    match kind {
        EventKind::SemWait if count <= 0 => None,
        EventKind::SemTryWait | EventKind::SemTryFail if count <= 0 => Some(EventKind::SemTryFail),
        EventKind::SemTryWait | EventKind::SemTryFail => Some(EventKind::SemTryWait),
        k => Some(k),
    }
}
