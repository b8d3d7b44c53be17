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
//!
//! Freed memory: a `free` is a write of its block's words (`AccessKind::Free`), and an
//! operation on a program's mutex reads the mutex's first word besides its mutex, so that a free
//! and an operation on a mutex in the freed block are dependent (the exploration then orders
//! them both ways and finds the use after free; the requirement table keeps their order in
//! production). Two operations on one mutex are dependent through the mutex already; as reads of
//! its word they commute, so the word adds no order of its own between them.

use crate::event::{Event, EventKind, ObjectRef};
use crate::logical_addr::Region;
use crate::sync_object;

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
    /// A semaphore, by the logical address of its `sem_t` when known, else raw.
    Sem(Region, u64),
    /// A barrier, by the logical address of its `pthread_barrier_t` when known, else raw.
    Barrier(Region, u64),
    /// An rwlock, by the logical address of its `pthread_rwlock_t` when known, else raw.
    RwLock(Region, u64),
}

/// Accesses of unknown size are taken to touch this many bytes.
const UNKNOWN_SIZE: u64 = 1;
/// Larger accesses (big memcpys) are clipped: their first 4 KiB name their objects.
const MAX_WORDS: u64 = 1024;

/// The words `len` bytes from `start` in `region` cover (a stack's offsets count down from the
/// top: there the bytes are `[start - len, start)`), clipped to [`MAX_WORDS`].
fn words(region: Region, start: u64, len: u64) -> std::ops::RangeInclusive<u64> {
    let (lo, hi) = match region {
        Region::Stack { .. } => (start.saturating_sub(len), start),
        _ => (start, start.saturating_add(len)),
    };
    let first = lo / 4;
    first..=(hi.saturating_sub(1) / 4).min(first + MAX_WORDS - 1)
}

/// An object's name: its logical address where the runtime gave one, else its raw address.
pub(crate) fn named(addr: u64, logical: Option<crate::logical_addr::LogicalAddr>) -> (Region, u64) {
    logical.map_or((Region::Static, addr), |l| (l.region, l.offset))
}

/// The objects an event belongs to, besides its thread (an iterator: the verifier asks for
/// every step of every run, and collecting them cost an allocation each).
pub fn objects_of(e: &Event) -> impl Iterator<Item = ObjectKey> + Clone {
    let (words, one) = match (e.kind, e.object) {
        (EventKind::Access(_), ObjectRef::Memory { addr, size, logical }) => {
            let (region, start) = named(addr, logical);
            let len = if size == 0 { UNKNOWN_SIZE } else { size as u64 };
            (Some((region, words(region, start, len))), None)
        }
        (_, ObjectRef::Mutex { addr, logical }) => {
            let (region, offset) = named(addr, logical);
            // A program's mutex lies in memory a free may release: its operations read its first
            // word. An internal object of a primitive (`sync_object`) is no memory.
            let word = sync_object::decode(addr).is_none().then(|| (region, words(region, offset, 1)));
            (word, Some(ObjectKey::Mutex(region, offset)))
        }
        (_, ObjectRef::Thread(t)) => (None, Some(ObjectKey::Thread(t.0))),
        (_, ObjectRef::Process) => (None, Some(ObjectKey::Process)),
        (_, ObjectRef::Atomic) => (None, Some(ObjectKey::Atomic)),
        (_, ObjectRef::Sem { addr, logical, .. }) => {
            let (region, offset) = named(addr, logical);
            (None, Some(ObjectKey::Sem(region, offset)))
        }
        (_, ObjectRef::Barrier { addr, logical, .. }) => {
            let (region, offset) = named(addr, logical);
            (None, Some(ObjectKey::Barrier(region, offset)))
        }
        (_, ObjectRef::RwLock { addr, logical }) => {
            let (region, offset) = named(addr, logical);
            (None, Some(ObjectKey::RwLock(region, offset)))
        }
        _ => (None, None),
    };
    // The mutex first: callers that look at the first object see what the event is on.
    one.into_iter().chain(words.into_iter().flat_map(|(region, ws)| ws.map(move |w| ObjectKey::Word(region, w))))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::access_kind::AccessKind;
    use crate::ids::ThreadId;

    fn access(addr: u64, size: u32) -> Event {
        Event { tid: ThreadId(0), k: 0, site: None, kind: EventKind::Access(AccessKind::Load), object: ObjectRef::Memory { addr, size, logical: None }, value: None }
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

    /// A mutex operation reads the mutex's first word, which a free of its block writes; an
    /// internal object of a primitive has no word.
    #[test]
    fn a_mutex_operation_is_on_its_first_word_too() {
        let lock = |addr: u64| Event { tid: ThreadId(1), k: 0, site: None, kind: EventKind::Lock, object: ObjectRef::Mutex { addr, logical: None }, value: None };
        let free = Event { tid: ThreadId(0), k: 0, site: None, kind: EventKind::Access(AccessKind::Free), object: ObjectRef::Memory { addr: 64, size: 48, logical: None }, value: None };
        let of_lock: Vec<_> = objects_of(&lock(72)).collect();
        assert_eq!(of_lock, vec![ObjectKey::Mutex(Region::Static, 72), ObjectKey::Word(Region::Static, 18)]);
        assert!(objects_of(&free).any(|k| k == of_lock[1]));
        let internal = sync_object::sub(72, 1);
        assert_eq!(objects_of(&lock(internal)).count(), 1);
    }
}
