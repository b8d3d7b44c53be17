//! Which events are dependent (DESIGN §3). Every event belongs to its thread and to zero or more
//! objects; two events of different threads are dependent iff they share an object, except two
//! reads of a word under the reads-commute equivalence (see [`crate::equivalence`], which says
//! which pairs on an object are dependent; this module says which objects an event is on).
//!
//! The process's end (DESIGN §3): an `End` event belongs to the process, so two ends are
//! dependent (and never both happen); each `Kill` of a thread `v` at the end belongs to `v`'s
//! object. Since every event of `v` belongs to `v` too (its own thread), a kill is dependent
//! with all of `v`'s events: `v` moves before it or not at all. (The thread itself is not in
//! this function's result; callers add it.)

use crate::event::{Event, EventKind, ObjectRef};
use crate::logical_addr::Region;

/// An object events synchronise on.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum ObjectKey {
    /// A 4-byte-aligned word of memory (by logical address when known, else raw).
    Word(Region, u64),
    /// A mutex, by the logical address of its `pthread_mutex_t` when known, else raw.
    Mutex(Region, u64),
    /// A thread's life: its creation, its exit, joins of it, its kill at the process's end.
    Thread(u32),
    /// The process: its end (two ends never both happen).
    Process,
    /// Atomic blocks (`__VERIFIER_atomic_*`): every block belongs to it, so blocks are ordered.
    Atomic,
}

/// Accesses of unknown size are taken to touch this many bytes.
const UNKNOWN_SIZE: u64 = 1;
/// Larger accesses (big memcpys) are clipped: their first 4 KiB name their objects.
const MAX_WORDS: u64 = 1024;

/// The objects an event belongs to, besides its thread (an iterator: the verifier asks for
/// every step of every run, and collecting them cost an allocation each).
pub fn objects_of(e: &Event) -> impl Iterator<Item = ObjectKey> + Clone {
    let (words, one) = match (e.kind, e.object) {
        (EventKind::Access(_), ObjectRef::Memory { addr, size, logical }) => {
            let (region, start) = match logical {
                Some(l) => (l.region, l.offset),
                None => (Region::Static, addr),
            };
            let len = if size == 0 { UNKNOWN_SIZE } else { size as u64 };
            // Stack offsets count down from the top: the access covers [offset - len, offset).
            let (lo, hi) = match region {
                Region::Stack { .. } => (start.saturating_sub(len), start),
                _ => (start, start.saturating_add(len)),
            };
            let first = lo / 4;
            let last = (hi.saturating_sub(1) / 4).min(first + MAX_WORDS - 1);
            (Some((region, first..=last)), None)
        }
        (_, ObjectRef::Mutex { addr, logical }) => {
            let (region, offset) = logical.map(|l| (l.region, l.offset)).unwrap_or((Region::Static, addr));
            (None, Some(ObjectKey::Mutex(region, offset)))
        }
        (_, ObjectRef::Thread(t)) => (None, Some(ObjectKey::Thread(t.0))),
        (_, ObjectRef::Process) => (None, Some(ObjectKey::Process)),
        (_, ObjectRef::Atomic) => (None, Some(ObjectKey::Atomic)),
        _ => (None, None),
    };
    words.into_iter().flat_map(|(region, ws)| ws.map(move |w| ObjectKey::Word(region, w))).chain(one)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::access_kind::AccessKind;
    use crate::ids::ThreadId;

    fn access(addr: u64, size: u32) -> Event {
        Event { tid: ThreadId(0), k: 0, site: None, kind: EventKind::Access(AccessKind::Load), object: ObjectRef::Memory { addr, size, logical: None } }
    }

    #[test]
    fn overlapping_accesses_share_words() {
        let of = |e: &Event| objects_of(e).collect::<Vec<_>>();
        let int_at_8 = of(&access(8, 4));
        let byte_at_9 = of(&access(9, 1));
        let long_at_8 = of(&access(8, 8));
        assert_eq!(int_at_8, byte_at_9);
        assert_eq!(long_at_8.len(), 2);
        assert!(long_at_8.contains(&int_at_8[0]));
        assert!(objects_of(&access(12, 4)).all(|w| !int_at_8.contains(&w)));
    }
}
