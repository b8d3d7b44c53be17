//! Which updates leave memory as it was (DESIGN §3's reads-commute refinement, extended to
//! read-modify-writes): a compare-exchange that fails, or one that writes the value it found, an
//! exchange that writes the value already there, an add of 0, is a read of its word, and two
//! such reads by different threads commute, as two loads do.
//!
//! Whether an update changes memory depends on the value it finds, so the label must be a
//! function of the event's history for the equivalence to be one: the value it finds is the
//! value the last write of its bytes in the history left, and that write is in every history
//! of the update (a write is dependent with every access to its word). The *model* here is the
//! one definition of that function, shared by the exploration (over the unfolding's chains) and
//! the oracle (over one interleaving):
//!
//! - each operation carries its operand ([`Operand`]): what a store stores, what an update
//!   compares with and writes, the values normalised ([`Value`]) so that a pointer into a heap
//!   block or a stack is the same value in every execution;
//! - the value a write leaves is *known* when it is a store of a known value or an update whose
//!   found value is known; the value an access finds is known when the last write of its word(s)
//!   is one write that covers exactly its bytes (same address, same size) and left a known value;
//!   anything else (no write yet in the history, a partial or wider write, a `memcpy`, a write
//!   of unknown size) is unknown;
//! - an update whose found value is known and which leaves it unchanged is a read
//!   (`AccessKind::UnchangedUpdate`); every other update is a write, as before.
//!
//! Unknown is always the conservative side (a write), so the model only ever merges traces
//! that are equivalent. The runtime reports whether each update it performed changed memory;
//! a run in which an update the model calls a read changed memory contradicts the model (an
//! uninstrumented write, say), and the exploration stops with an error instead of a verdict.

use crate::access_kind::AccessKind;
use crate::dependence::{objects_of, ObjectKey};
use crate::event::{Event, EventKind, ObjectRef};
use crate::logical_addr::{LogicalAddr, Region};
pub use crate::operand::{of_size, raw, Operand, Valued, Value};
use std::collections::HashMap;

/// What an operation does to its bytes, given the value it finds there.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Effect {
    /// The value found is unknown (an update): a write whose value is unknown.
    Unknown,
    /// Memory stays as it was: an update that is a read.
    Unchanged,
    /// A write leaving this value.
    Writes(Value),
}

/// What `op` (of `size` bytes) does when it finds `old` (`None`: not known).
pub fn effect(op: Operand, old: Option<Value>, size: u32) -> Effect {
    let Some(old) = old else {
        return match op {
            Operand::Store(v) => Effect::Writes(v),
            _ => Effect::Unknown,
        };
    };
    let changes_to = |new: Value| if new == old { Effect::Unchanged } else { Effect::Writes(new) };
    match op {
        Operand::Store(v) => Effect::Writes(v),
        Operand::Cas { expected, desired } => {
            if old == expected {
                changes_to(desired)
            } else {
                Effect::Unchanged
            }
        }
        Operand::Xchg(v) => changes_to(v),
        Operand::Add(d) | Operand::Sub(d) => match old.region {
            Region::Static => {
                let new = match op {
                    Operand::Add(_) => old.offset.wrapping_add(d),
                    _ => old.offset.wrapping_sub(d),
                };
                changes_to(raw(of_size(new, size)))
            }
            // Arithmetic on a pointer may leave its block: its name is not known.
            _ => Effect::Unknown,
        },
    }
}

/// What the last write of an access's bytes left, as an event of the history carries it: where
/// that write was, its size, and the value (known). Reads pass their last write's on.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct LastWrite {
    pub at: LogicalAddr,
    pub size: u32,
    pub value: Value,
}

/// Where an access is, as the model keys it: its logical address (its raw one where the runtime
/// gave none) and its size; `None` for no access of a known size of at most 8 bytes.
pub fn place(e_object: &ObjectRef) -> Option<(LogicalAddr, u32)> {
    match *e_object {
        ObjectRef::Memory { addr, size, logical } if (1..=8).contains(&size) => Some((logical.unwrap_or(raw(addr)), size)),
        _ => None,
    }
}

/// The value an access at `place` finds, given what each of its words' last writes left
/// (`None` for a word whose last write left nothing known): known iff they are all one known
/// write of exactly these bytes.
pub fn found(place: Option<(LogicalAddr, u32)>, mut lasts: impl Iterator<Item = Option<LastWrite>>) -> Option<Value> {
    let (at, size) = place?;
    let first = lasts.next()??;
    if first.at != at || first.size != size {
        return None;
    }
    for l in lasts {
        if l? != first {
            return None;
        }
    }
    Some(first.value)
}

/// What an access leaves for later ones to find: a write its own value where known (nothing
/// otherwise), a read what it found.
pub fn left(kind: EventKind, place: Option<(LogicalAddr, u32)>, operand: Option<Operand>, found_last: Option<LastWrite>, found_value: Option<Value>) -> Option<LastWrite> {
    let EventKind::Access(k) = kind else { return None };
    if !k.writes() {
        return found_last;
    }
    let (at, size) = place?;
    match effect(operand?, found_value, size) {
        Effect::Writes(value) => Some(LastWrite { at, size, value }),
        Effect::Unchanged | Effect::Unknown => None,
    }
}

/// The kind an update of kind `kind` with `operand` is where it finds `old`: a read
/// ([`AccessKind::UnchangedUpdate`]) where it leaves memory as it was, else as it is.
pub fn label(kind: EventKind, operand: Option<Operand>, old: Option<Value>, size: u32) -> EventKind {
    match (kind, operand) {
        (EventKind::Access(AccessKind::Rmw | AccessKind::CmpXchg | AccessKind::UnchangedUpdate), Some(op)) if !matches!(op, Operand::Store(_)) => {
            match effect(op, old, size) {
                Effect::Unchanged => EventKind::Access(AccessKind::UnchangedUpdate),
                _ if kind == EventKind::Access(AccessKind::UnchangedUpdate) => EventKind::Access(update_kind(op)),
                _ => kind,
            }
        }
        _ => kind,
    }
}

/// The instruction's kind of an update with `op`.
pub fn update_kind(op: Operand) -> AccessKind {
    match op {
        Operand::Cas { .. } => AccessKind::CmpXchg,
        _ => AccessKind::Rmw,
    }
}

/// Label one interleaving's updates ([`label`]) as the model says, in order: what the oracle
/// and the requirement table see. Returns the first update the model calls a read that the run
/// says changed memory (the model is wrong for this program), if any.
pub fn label_trace(events: &mut [Event]) -> Option<usize> {
    // Per word, what its last write left.
    let mut last: HashMap<ObjectKey, Option<LastWrite>> = HashMap::new();
    let mut contradiction = None;
    for (i, e) in events.iter_mut().enumerate() {
        let EventKind::Access(_) = e.kind else { continue };
        let words: Vec<ObjectKey> = objects_of(e).collect();
        let place = place(&e.object);
        let lasts: Vec<Option<LastWrite>> = words.iter().map(|w| last.get(w).copied().flatten()).collect();
        let old = found(place, lasts.iter().copied());
        let operand = e.value.map(|v| v.operand);
        e.kind = label(e.kind, operand, old, place.map_or(0, |p| p.1));
        if e.kind == EventKind::Access(AccessKind::UnchangedUpdate) && e.value.is_some_and(|v| v.changed) && contradiction.is_none() {
            contradiction = Some(i);
        }
        let EventKind::Access(k) = e.kind else { continue };
        if k.writes() {
            let l = left(e.kind, place, operand, None, old);
            for w in words {
                last.insert(w, l);
            }
        }
    }
    contradiction
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ids::ThreadId;

    fn at(a: u64) -> LogicalAddr {
        raw(a)
    }

    #[test]
    fn a_failed_or_idle_update_leaves_memory_as_it_was() {
        let cas = |e, d| Operand::Cas { expected: raw(e), desired: raw(d) };
        assert_eq!(effect(cas(0, 1), Some(raw(0)), 4), Effect::Writes(raw(1)));
        assert_eq!(effect(cas(0, 1), Some(raw(1)), 4), Effect::Unchanged);
        assert_eq!(effect(cas(1, 1), Some(raw(1)), 4), Effect::Unchanged, "writes what it found");
        assert_eq!(effect(cas(0, 1), None, 4), Effect::Unknown);
        assert_eq!(effect(Operand::Xchg(raw(1)), Some(raw(1)), 4), Effect::Unchanged);
        assert_eq!(effect(Operand::Add(0), Some(raw(7)), 4), Effect::Unchanged);
        assert_eq!(effect(Operand::Add(1), Some(raw(0xff)), 1), Effect::Writes(raw(0)), "wraps at its size");
        assert_eq!(effect(Operand::Sub(1), Some(raw(0)), 8), Effect::Writes(raw(u64::MAX)));
        let heap = LogicalAddr { region: Region::Heap { thread: ThreadId(1), alloc: 0 }, offset: 8 };
        assert_eq!(effect(Operand::Add(8), Some(heap), 8), Effect::Unknown, "pointer arithmetic");
        assert_eq!(effect(Operand::Store(raw(3)), None, 4), Effect::Writes(raw(3)));
    }

    #[test]
    fn a_value_is_found_only_from_one_write_of_exactly_its_bytes() {
        let w = |a, size, v| Some(LastWrite { at: at(a), size, value: raw(v) });
        assert_eq!(found(Some((at(8), 8)), [w(8, 8, 5), w(8, 8, 5)].into_iter()), Some(raw(5)));
        assert_eq!(found(Some((at(8), 8)), [w(8, 8, 5), w(12, 4, 5)].into_iter()), None, "a partial write of the second word");
        assert_eq!(found(Some((at(8), 4)), [w(8, 8, 5)].into_iter()), None, "a wider write");
        assert_eq!(found(Some((at(8), 4)), [None].into_iter()), None, "no known write");
        assert_eq!(found(None, [w(8, 4, 5)].into_iter()), None, "an access of unknown size");
    }

    fn access(tid: u32, kind: AccessKind, addr: u64, operand: Option<Operand>, changed: bool) -> Event {
        Event {
            tid: ThreadId(tid),
            k: 0,
            site: None,
            kind: EventKind::Access(kind),
            object: ObjectRef::Memory { addr, size: 8, logical: None },
            value: operand.map(|operand| Valued { operand, changed }),
        }
    }

    #[test]
    fn an_interleaving_labels_its_updates_in_order() {
        let cas = |e, d| Some(Operand::Cas { expected: raw(e), desired: raw(d) });
        let mut t = vec![
            access(0, AccessKind::CmpXchg, 64, cas(0, 1), true),    // nothing known yet: a write
            access(0, AccessKind::Store, 64, Some(Operand::Store(raw(0))), false),
            access(1, AccessKind::CmpXchg, 64, cas(0, 1), true),    // finds 0: writes 1
            access(2, AccessKind::CmpXchg, 64, cas(0, 2), false),   // finds 1: fails, a read
            access(2, AccessKind::Load, 64, None, false),
            access(1, AccessKind::Rmw, 64, Some(Operand::Xchg(raw(1))), false), // finds 1: idle
        ];
        assert_eq!(label_trace(&mut t), None);
        let kinds: Vec<_> = t.iter().map(|e| e.kind.name()).collect();
        assert_eq!(kinds, ["cmpxchg", "store", "cmpxchg", "update-unchanged", "load", "update-unchanged"]);
        let mut wrong = vec![access(0, AccessKind::Store, 64, Some(Operand::Store(raw(1))), false), access(1, AccessKind::CmpXchg, 64, cas(0, 2), true)];
        assert_eq!(label_trace(&mut wrong), Some(1), "the run says it changed what the model says it found unequal");
    }
}
