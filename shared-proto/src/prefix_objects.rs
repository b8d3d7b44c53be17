//! The prefix's object index (DESIGN §4's prefix barrier, weakened as docs/src/enforce.md
//! "Past the cut" states it): which objects each event of the verified trace `τ` touches, named
//! as a run in another process can name them, and whether it writes them. With it, an event of a
//! thread past its cut waits only for the pending prefix events it depends on, instead of for
//! every thread's whole part of the prefix.
//!
//! Names ([`Key`]):
//! - a word of the executable's image (a program static, by its offset: the same in every process
//!   of one binary, `image_range`);
//! - a program mutex in the image (by its offset): every operation on it writes it;
//! - *unnamed*: the heap, stacks and the C library's statics, whose addresses differ from process
//!   to process. One object stands for all of it, so an event on unnamed memory depends on every
//!   prefix event on unnamed memory: coarser than the truth, never finer;
//! - a thread, for its kill at the process's end: every event of the killed thread depends on
//!   it, so a thread the verified trace cut off there waits for it (for good: a kill completes
//!   only with the process) at whatever it does past its cut.
//!
//! Memory accesses, operations on program mutexes and kills are indexed; a run's memory access,
//! mutex operation or thread exit past its cut looks its objects up (an exit's object is its
//! thread: no prefix event but a kill of it can be pending then, a join of it would follow its
//! exit in the verified trace). Every other event past a cut (a creation, a join, a primitive's
//! operation, a choice, the process's end) waits as before, for all of the prefix. Dependence is the relation of `equivalence` with reads commuting: an
//! access conflicts with a prefix event on one of its objects unless neither writes (two reads
//! commute as state transformers, whichever relation the prefix was verified in: neither changes
//! what the other, or anything after them, finds). A compare-exchange that the value model
//! labelled a read in `τ` is a read here (the table's events are labelled), while an update
//! outside the prefix, whose effect is not known before it runs, is taken for a write.
//!
//! The index is *precise* when every indexed event could be named: an access to the image of
//! unknown size or of more than [`MAX_WORDS`] words makes it imprecise, and then every event past
//! a cut waits for all of the prefix.

use crate::dependence::named;
use crate::event::{Event, EventKind, ObjectRef};
use crate::image_range::ImageRange;
use crate::logical_addr::Region;
use crate::sync_object;

/// Accesses of more words than this make the index imprecise (a big `memcpy` into a static).
pub const MAX_WORDS: u64 = 1024;

/// An object as every process of one binary names it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Key {
    /// The 4-byte word at this word index of the image (offset / 4).
    Word(u64),
    /// The program mutex at this offset of the image.
    Mutex(u64),
    /// A thread's life (its kill at the process's end, which every later event of the thread
    /// depends on: a thread the verified trace cuts off there never goes past its cut).
    Thread(u32),
    /// Memory with no name across processes: the heap, stacks, the C library's statics.
    Unnamed,
}

const TAG_SHIFT: u32 = 62;
const VALUE_MASK: u64 = (1 << TAG_SHIFT) - 1;

impl Key {
    /// As stored: the tag in the top two bits. The order of the codes is the order of the keys.
    pub fn code(self) -> u64 {
        match self {
            Key::Word(w) => w & VALUE_MASK,
            Key::Mutex(o) => (1 << TAG_SHIFT) | (o & VALUE_MASK),
            Key::Thread(t) => (2 << TAG_SHIFT) | t as u64,
            Key::Unnamed => 3 << TAG_SHIFT,
        }
    }
}

/// One prefix event on one object.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct Entry {
    /// [`Key::code`].
    pub key: u64,
    pub thread: u32,
    pub k: u32,
    pub writes: bool,
}

/// The objects `e` touches as the index names them, with whether it writes each (`None`: it
/// cannot be named, the index is imprecise; an empty list: not indexed).
pub fn keys_of(e: &Event, image: ImageRange) -> Option<Vec<(Key, bool)>> {
    match (e.kind, e.object) {
        (EventKind::Access(kind), ObjectRef::Memory { addr, size, logical }) => {
            // Named as a run names its own access (`access_keys`); heap and stacks are unnamed.
            let (region, start) = named(addr, logical);
            match region {
                Region::Static => Some(access_keys(start, size as u64, kind.writes(), image)?.collect()),
                _ => Some(vec![(Key::Unnamed, kind.writes())]),
            }
        }
        (EventKind::Lock | EventKind::Unlock | EventKind::TryLock | EventKind::TryLockFail, ObjectRef::Mutex { addr, logical }) if sync_object::decode(addr).is_none() => {
            Some(mutex_keys(named(addr, logical), image).collect())
        }
        (EventKind::Kill, ObjectRef::Thread(v)) => Some(vec![(Key::Thread(v.0), true)]),
        _ => Some(Vec::new()),
    }
}

/// The objects of an operation on the program mutex named `(region, offset)`: the mutex (written)
/// and its first word (read, as `dependence` has it: a free of its block conflicts), or unnamed.
fn mutex_keys((region, offset): (Region, u64), image: ImageRange) -> impl Iterator<Item = (Key, bool)> {
    let (mutex, word) = match (region, image.offset(offset)) {
        (Region::Static, Some(off)) => ((Key::Mutex(off), true), Some((Key::Word(off / 4), false))),
        _ => ((Key::Unnamed, true), None),
    };
    std::iter::once(mutex).chain(word)
}

/// The keys of a run's own access at `addr` (`size` bytes; the process's image `image`): what it
/// looks up. `None` when it cannot be named (wider than [`MAX_WORDS`], or of unknown size, in the
/// image).
pub fn access_keys(addr: u64, size: u64, writes: bool, image: ImageRange) -> Option<impl Iterator<Item = (Key, bool)>> {
    let (first, last, named) = match image.offset(addr) {
        Some(off) => {
            if size == 0 || size.div_ceil(4) + 1 > MAX_WORDS {
                return None;
            }
            (off / 4, (off + size - 1) / 4, true)
        }
        None => (0, 0, false),
    };
    Some((first..=last).map(move |w| if named { (Key::Word(w), writes) } else { (Key::Unnamed, writes) }))
}

/// The keys of a run's own operation on the program mutex at `addr`.
pub fn mutex_op_keys(addr: u64, image: ImageRange) -> impl Iterator<Item = (Key, bool)> {
    mutex_keys((Region::Static, addr), image)
}

/// The index of a trace's events (labelled as the table labels them), sorted by key, thread and
/// event; `None` when it is imprecise.
pub fn index(events: &[Event], image: ImageRange) -> Option<Vec<Entry>> {
    let mut entries = Vec::new();
    for e in events {
        let mut keys = keys_of(e, image)?;
        keys.sort();
        // One entry per key and event, writing if any of its parts writes.
        keys.dedup_by(|b, a| {
            let same = a.0 == b.0;
            if same {
                a.1 |= b.1;
            }
            same
        });
        entries.extend(keys.into_iter().map(|(key, writes)| Entry { key: key.code(), thread: e.tid.0, k: e.k, writes }));
    }
    entries.sort();
    Some(entries)
}

/// Random access to a sorted index (a `Vec` of entries, or the section of a prefix's bytes).
pub trait Entries {
    fn len(&self) -> usize;
    fn get(&self, i: usize) -> Entry;
    fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

impl Entries for [Entry] {
    fn len(&self) -> usize {
        <[Entry]>::len(self)
    }
    fn get(&self, i: usize) -> Entry {
        self[i]
    }
}

/// The first index in `lo..hi` whose entry is not below `pred` (entries sorted).
fn partition(entries: &(impl Entries + ?Sized), mut lo: usize, mut hi: usize, below: impl Fn(&Entry) -> bool) -> usize {
    while lo < hi {
        let mid = lo + (hi - lo) / 2;
        if below(&entries.get(mid)) {
            lo = mid + 1;
        } else {
            hi = mid;
        }
    }
    lo
}

/// For each thread but `me`, the last of its events before `cut[thread]` on `key` that an
/// access there (`writes`) depends on: `f(thread, k)` once per such thread (an event depends on
/// every earlier one of its thread, so waiting for the last is waiting for all).
pub fn conflicts(entries: &(impl Entries + ?Sized), key: Key, writes: bool, me: u32, cut: impl Fn(u32) -> u32, mut f: impl FnMut(u32, u32)) {
    let code = key.code();
    let n = entries.len();
    let start = partition(entries, 0, n, |e| e.key < code);
    let end = partition(entries, start, n, |e| e.key <= code);
    let mut i = start;
    while i < end {
        let thread = entries.get(i).thread;
        let group_end = partition(entries, i, end, |e| e.thread <= thread);
        if thread != me {
            let limit = cut(thread);
            // The events of the group inside the cut, latest first.
            let inside = partition(entries, i, group_end, |e| e.k < limit);
            if let Some(x) = (i..inside).rev().map(|j| entries.get(j)).find(|x| writes || x.writes) {
                f(thread, x.k);
            }
        }
        i = group_end;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::access_kind::AccessKind;
    use crate::ids::ThreadId;
    use crate::logical_addr::LogicalAddr;

    const IMAGE: ImageRange = ImageRange { start: 0x1000, end: 0x3000 };

    fn access(tid: u32, k: u32, kind: AccessKind, addr: u64, size: u32) -> Event {
        Event { tid: ThreadId(tid), k, site: None, kind: EventKind::Access(kind), object: ObjectRef::Memory { addr, size, logical: None }, value: None }
    }

    fn all(entries: &[Entry], key: Key, writes: bool, me: u32, cut: &[u32]) -> Vec<(u32, u32)> {
        let mut out = Vec::new();
        conflicts(entries, key, writes, me, |t| cut[t as usize], |t, k| out.push((t, k)));
        out
    }

    /// T1 writes x twice and reads y; T2 reads x; T0 locks a static mutex. A read of x past the
    /// cut waits for T1's last write inside the cut only; a write waits for T2's read too; y
    /// and the mutex are objects of their own; memory outside the image is one unnamed object.
    #[test]
    fn an_access_waits_for_the_last_conflicting_event_of_each_thread_inside_the_cut() {
        let (x, y, m) = (0x1010, 0x1020, 0x1100);
        let heap = LogicalAddr { region: Region::Heap { thread: ThreadId(1), alloc: 0 }, offset: 8 };
        let events = [
            access(1, 0, AccessKind::Store, x, 4),
            access(1, 1, AccessKind::Store, x, 4),
            access(2, 0, AccessKind::Load, x, 4),
            access(1, 2, AccessKind::Load, y, 4),
            Event { tid: ThreadId(0), k: 0, site: None, kind: EventKind::Lock, object: ObjectRef::Mutex { addr: m, logical: None }, value: None },
            Event { tid: ThreadId(2), k: 1, site: None, kind: EventKind::Access(AccessKind::Store), object: ObjectRef::Memory { addr: 0x7f00, size: 8, logical: Some(heap) }, value: None },
        ];
        let index = index(&events, IMAGE).unwrap();
        let xw = Key::Word((x - IMAGE.start) / 4);
        assert_eq!(all(&index, xw, false, 0, &[1, 3, 2]), vec![(1, 1)]);
        assert_eq!(all(&index, xw, false, 0, &[1, 1, 2]), vec![(1, 0)]);
        assert_eq!(all(&index, xw, true, 0, &[1, 3, 2]), vec![(1, 1), (2, 0)]);
        assert_eq!(all(&index, xw, true, 1, &[1, 3, 2]), vec![(2, 0)]);
        assert_eq!(all(&index, xw, true, 0, &[0, 0, 0]), vec![]);
        let yw = Key::Word((y - IMAGE.start) / 4);
        assert_eq!(all(&index, yw, false, 0, &[1, 3, 2]), vec![]);
        assert_eq!(all(&index, yw, true, 0, &[1, 3, 2]), vec![(1, 2)]);
        let (mk, mword): (Vec<_>, _) = (mutex_op_keys(m, IMAGE).collect(), Key::Word((m - IMAGE.start) / 4));
        assert_eq!(mk, vec![(Key::Mutex(m - IMAGE.start), true), (mword, false)]);
        assert_eq!(all(&index, mk[0].0, true, 1, &[1, 3, 2]), vec![(0, 0)]);
        assert_eq!(all(&index, mword, false, 1, &[1, 3, 2]), vec![], "a mutex operation reads its word");
        assert_eq!(all(&index, Key::Unnamed, false, 0, &[1, 3, 2]), vec![(2, 1)]);
        let kill = Event { tid: ThreadId(0), k: 1, site: None, kind: EventKind::Kill, object: ObjectRef::Thread(ThreadId(2)), value: None };
        let with_kill = super::index(&[events.as_slice(), &[kill]].concat(), IMAGE).unwrap();
        assert_eq!(all(&with_kill, Key::Thread(2), true, 2, &[2, 3, 2]), vec![(0, 1)], "T2 waits for its kill inside the cut");
        assert_eq!(all(&with_kill, Key::Thread(2), true, 2, &[1, 3, 2]), vec![]);
        let keys: Vec<_> = access_keys(0x9000, 4, false, IMAGE).unwrap().collect();
        assert_eq!(keys, vec![(Key::Unnamed, false)]);
        let keys: Vec<_> = access_keys(x + 2, 4, true, IMAGE).unwrap().collect();
        assert_eq!(keys, vec![(xw, true), (Key::Word(xw_next(xw)), true)]);
    }

    fn xw_next(k: Key) -> u64 {
        match k {
            Key::Word(w) => w + 1,
            _ => unreachable!(),
        }
    }

    /// An access to the image that cannot be named makes the index imprecise; one outside it
    /// is unnamed whatever its size.
    #[test]
    fn an_access_of_unknown_size_to_the_image_makes_the_index_imprecise() {
        assert!(index(&[access(1, 0, AccessKind::Store, 0x1010, 0)], IMAGE).is_none());
        assert!(index(&[access(1, 0, AccessKind::Store, 0x1010, 64 << 10)], IMAGE).is_none());
        assert!(index(&[access(1, 0, AccessKind::Store, 0x9010, 0)], IMAGE).is_some());
        assert!(access_keys(0x1010, 0, false, IMAGE).is_none());
    }

    #[test]
    fn keys_sort_as_their_codes() {
        let keys = [Key::Word(0), Key::Word(VALUE_MASK), Key::Mutex(0), Key::Mutex(5), Key::Thread(0), Key::Thread(u32::MAX), Key::Unnamed];
        for w in keys.windows(2) {
            assert!(w[0] < w[1] && w[0].code() < w[1].code());
        }
    }
}
