//! Updates labelled by the value model over the unfolding (`shared_proto::value_model`, the
//! reads-commute refinement of DESIGN §3 extended to read-modify-writes; see
//! docs/src/verify.md, "Which executions are one trace").
//!
//! An update (a cmpxchg or an atomicrmw the model knows) that leaves memory as it was is a read:
//! its action is the read version (on its thread's copies of its words), otherwise the write
//! version (on the words and every copy). Which one it is depends on the value it finds, which
//! is what the last write of its words left: every event the model follows carries that
//! ([`MemFacts::left`]: a write its own value where known, a read what its last write left),
//! set once when the event is made, from its predecessors on its memory objects. So the label is
//! a function of the event's history, the same wherever the event is made (a run's step, a
//! conflicting extension, an operation a thread is left blocked on or cut off at): each of those
//! makes its events through [`make`].
//!
//! Conflicting extensions: an update moved up its objects' chains may find another value there
//! and be the other version. `cex` places each version where the model labels it so, and adds
//! the other version's placements too ([`alternate_preds`]): with the same thread predecessor,
//! the two versions are in conflict, and the other one's histories lie within the update's
//! (its last write is above the update's, since a different value means a different write).

use crate::object_table::{ObjClass, ObjIdx, ObjectTable};
use crate::unfolding::{ActionIdx, EventIdx, MemFacts, Unfolding};
use shared_proto::value_model::{self, LastWrite, Operand, Value};
use shared_proto::{AccessKind, Event, EventKind, LogicalAddr};

/// Where an access is and its operand, as the model follows it (`None`: not followed).
pub type Source = Option<((LogicalAddr, u32), Option<Operand>)>;

/// What the model follows of a run's event.
pub fn source_of(e: &Event) -> Source {
    match e.kind {
        EventKind::Access(_) => value_model::place(&e.object).map(|p| (p, e.value.map(|v| v.operand))),
        _ => None,
    }
}

/// What the model follows of an event of the unfolding.
pub fn source_of_event(u: &Unfolding, e: EventIdx) -> Source {
    u.mem(e).map(|m| (m.place, m.operand))
}

/// An update the model may label a read.
pub fn is_update(kind: EventKind) -> bool {
    matches!(kind, EventKind::Access(AccessKind::Rmw | AccessKind::CmpXchg | AccessKind::UnchangedUpdate))
}

/// What an access of `action` with predecessors `preds` finds: the last write's record common
/// to all its memory objects (`None` unless they all carry one and the same), and the value at
/// `place` where known.
fn found(u: &Unfolding, objects: &ObjectTable, action: ActionIdx, preds: &[Option<EventIdx>], place: (LogicalAddr, u32)) -> (Option<LastWrite>, Option<Value>) {
    let objs = &u.actions(action).objects;
    let mut lasts = objs.iter().zip(preds).filter(|(&o, _)| objects.class(o) == ObjClass::Memory).map(|(_, p)| p.and_then(|p| u.mem(p)).and_then(|m| m.left));
    let common = match lasts.next() {
        Some(Some(first)) if lasts.all(|l| l == Some(first)) => Some(first),
        _ => None,
    };
    (common, value_model::found(Some(place), std::iter::once(common)))
}

/// The kind an access of `kind` (its action `action`) is with predecessors `preds`: an update
/// the model follows is a read where it leaves memory as it was.
pub fn label(u: &Unfolding, objects: &ObjectTable, action: ActionIdx, preds: &[Option<EventIdx>], kind: EventKind, src: Source) -> EventKind {
    match src {
        Some((place, operand)) if is_update(kind) => value_model::label(kind, operand, found(u, objects, action, preds, place).1, place.1),
        _ => kind,
    }
}

/// The event of `action` with `preds` (made if new, with what the model knows of it).
pub fn make(u: &mut Unfolding, objects: &ObjectTable, action: ActionIdx, preds: &[Option<EventIdx>], kind: EventKind, gap: u32, src: Source) -> (EventIdx, bool) {
    let (e, new) = u.event(action, preds, kind, gap);
    if let (true, Some((place, operand))) = (new, src) {
        let (common, old) = found(u, objects, action, preds, place);
        let left = value_model::left(kind, Some(place), operand, common, old);
        u.set_mem(e, MemFacts { place, operand, left });
    }
    (e, new)
}

/// How far up a word's chain [`read_version_possible`] looks before it assumes so.
const WALK: usize = 256;

/// Whether the read version of an update (`src`, now the write version `action`) can be placed
/// anywhere: whether some event up its word's chain in `U`, from `last` (`C`'s last event
/// there), left a value of its bytes that it would leave unchanged (looking at most [`WALK`]
/// events up; beyond, it is assumed). Making the read version's action makes its thread a
/// reader of the word (a restart of the exploration if it is new: `word_readers`), so it is
/// made only where it can be placed.
pub fn read_version_possible(u: &Unfolding, objects: &ObjectTable, action: ActionIdx, last: impl Fn(ObjIdx) -> Option<EventIdx>, src: Source) -> bool {
    let Some((place, Some(op))) = src else { return false };
    let Some(word) = u.actions(action).objects.iter().copied().find(|&o| objects.class(o) == ObjClass::Memory && !objects.is_copy(o)) else { return false };
    let mut at = last(word);
    let mut looked = 0;
    while let Some(x) = at {
        if looked == WALK {
            return true;
        }
        looked += 1;
        if let Some(l) = u.mem(x).and_then(|m| m.left) {
            if (l.at, l.size) == place && value_model::effect(op, Some(l.value), place.1) == value_model::Effect::Unchanged {
                return true;
            }
        }
        at = u.pred(x, word);
    }
    false
}

/// The predecessors the other version `alt` of update `e` starts from: on each of its objects,
/// the last event there in `[e] \ {e}` (`e`'s own predecessor where they share the object).
pub fn alternate_preds(u: &Unfolding, e: EventIdx, alt: ActionIdx, out: &mut Vec<Option<EventIdx>>) {
    out.clear();
    let preds: Vec<(ObjIdx, Option<EventIdx>)> = u.preds(e).collect();
    for &o in u.actions(alt).objects.iter() {
        let p = match preds.iter().find(|(x, _)| *x == o) {
            Some(&(_, p)) => p,
            None => preds.iter().filter_map(|&(_, p)| p.and_then(|p| u.last_on(p, o))).max_by_key(|&l| u.depth_on(Some(l), o)),
        };
        out.push(p);
    }
}
