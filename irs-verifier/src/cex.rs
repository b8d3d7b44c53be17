//! Conflicting extensions (QPOR paper §5.3, `cexp`), generalised from locks to every object. An
//! event `e` of `C` on a memory word or mutex `o` could have happened before the earlier events
//! on `o` that do not precede it causally: for each position `q` further up `o`'s chain (while
//! the event right after `q` is not in the history of `e`'s thread predecessor), the event with
//! `e`'s action and predecessors `[pt(e)] ∪ [q]` is in conflict with `C` and belongs to the
//! unfolding. A lock can only be taken where the mutex is free; a trylock fits anywhere and its
//! result follows from the position. Thread objects (creation, program order, joins) never
//! reorder.

use crate::object_table::{ObjClass, ObjIdx, ObjectTable};
use crate::unfolding::{action_kind, ActionIdx, EventIdx, Unfolding};
use shared_proto::EventKind;

/// After `q` (the last event on mutex `m`, `None` for none), is `m` free?
pub fn mutex_free_after(u: &Unfolding, m: ObjIdx, mut q: Option<EventIdx>) -> bool {
    while let Some(x) = q {
        match u.event_kind(x) {
            EventKind::Lock | EventKind::TryLock => return false,
            EventKind::Unlock => return true,
            _ => q = u.pred(x, m),
        }
    }
    true
}

/// Add to `u` the conflicting extensions that `e` gives (`own` is the object of `e`'s thread).
pub fn add_conflicting_extensions(u: &mut Unfolding, objects: &ObjectTable, e: EventIdx, own: ObjIdx) {
    let action = u.action_idx(e);
    let kind = u.event_kind(e);
    let preds: Vec<Option<EventIdx>> = u.preds(e).map(|(_, p)| p).collect();
    add_moved(u, objects, action, kind, &preds, own);
}

/// The same for an operation a thread is blocked on at the end of a run (a deadlock): the event
/// it would be with predecessors `preds` (the configuration's last events on its objects) does
/// not exist, but placed before earlier events on its objects it may: those events are in
/// `cex(C)` although no event of `C` has their action.
pub fn add_blocked_extensions(u: &mut Unfolding, objects: &ObjectTable, action: ActionIdx, kind: EventKind, preds: &[Option<EventIdx>], own: ObjIdx) {
    add_moved(u, objects, action, kind, preds, own);
}

fn add_moved(u: &mut Unfolding, objects: &ObjectTable, action: ActionIdx, kind: EventKind, preds: &[Option<EventIdx>], own: ObjIdx) {
    let kind = action_kind(kind);
    let objs: Vec<ObjIdx> = u.actions(action).objects.to_vec();
    let t0 = objs.iter().position(|&o| o == own).and_then(|i| preds[i]);
    for (slot, &o) in objs.iter().enumerate() {
        let class = objects.class(o);
        if class == ObjClass::Thread {
            continue;
        }
        let mut r = preds[slot];
        while let Some(rr) = r {
            if t0.is_some_and(|t| u.le(rr, t)) {
                break;
            }
            let q = u.pred(rr, o);
            r = q;
            let free = class == ObjClass::Mutex && mutex_free_after(u, o, q);
            if kind == EventKind::Lock && !free {
                continue;
            }
            let new_preds: Vec<Option<EventIdx>> = objs
                .iter()
                .map(|&x| {
                    if x == own {
                        t0
                    } else if x == o {
                        q
                    } else {
                        deeper(u, x, t0.and_then(|t| u.last_on(t, x)), q.and_then(|q| u.last_on(q, x)))
                    }
                })
                .collect();
            let new_kind = match kind {
                EventKind::TryLock if !free => EventKind::TryLockFail,
                k => k,
            };
            u.event(action, &new_preds, new_kind);
        }
    }
}

/// The later of two events on `o` known to be comparable.
fn deeper(u: &Unfolding, o: ObjIdx, a: Option<EventIdx>, b: Option<EventIdx>) -> Option<EventIdx> {
    match (a, b) {
        (Some(a), Some(b)) => Some(if u.tree_le(o, a, b) { b } else { a }),
        (a, None) => a,
        (None, b) => b,
    }
}
