//! The equivalence executions are grouped in (DESIGN §3, "Objects and dependence"), and what an
//! event of one trace must follow under it.
//!
//! Two relations:
//! - [`Equivalence::ReadsCommute`] (the default): two reads of a word by different threads are
//!   independent; a write to a word is dependent with every other access to it. This is the
//!   equivalence Nidhugg's optimal mode and the reads-from tools count traces in for programs
//!   without primitives.
//! - [`Equivalence::Mazurkiewicz`]: every access to a word is dependent with every other (the
//!   word behaves like a lock); finer, so more traces, kept for comparison.
//!
//! Under reads-commute two posts of a semaphore commute too (`sem_post` by two threads leaves
//! the same count either way and disables nothing), and so do two arrivals at a barrier, two
//! departures, and an arrival and a departure, and two of an rwlock's reader operations
//! (acquisitions, tried ones, releases); every other pair of operations on one of them is
//! dependent (a wait and a post, an init and anything, a release and an arrival or a departure,
//! a writer's operation and anything). Everything else (mutexes, threads, the process, atomic blocks) is dependent on
//! every other event on it under both. [`LastAccesses`] answers, while a trace is read in order,
//! which earlier events a new event on an object is dependent on there: the last event on the
//! object, or for a word under reads-commute, a read the last write and a write the last write
//! and the reads since it. The requirement table, the prefix checks and the oracle all ask it,
//! so that they agree with the verifier on one relation.

use crate::dependence::ObjectKey;
use crate::event::{Event, EventKind};
use crate::ids::ThreadId;
use std::collections::HashMap;

/// Which accesses to a word are dependent.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Equivalence {
    /// Reads of a word by different threads commute.
    #[default]
    ReadsCommute,
    /// Every access to a word is dependent with every other.
    Mazurkiewicz,
}

impl Equivalence {
    /// The name the command line takes (`--equivalence NAME`).
    pub fn name(self) -> &'static str {
        match self {
            Equivalence::ReadsCommute => "reads-commute",
            Equivalence::Mazurkiewicz => "mazurkiewicz",
        }
    }

    pub fn from_name(s: &str) -> Option<Equivalence> {
        [Equivalence::ReadsCommute, Equivalence::Mazurkiewicz].into_iter().find(|e| e.name() == s)
    }

    /// Whether an event of kind `kind` on `key` takes part as a reader that commutes with other
    /// readers of it: a read of a word, a post of a semaphore (two posts commute: either order
    /// leaves the same count, and a post disables nothing), an arrival at a barrier or a
    /// departure from it (see `EventKind::commutes_natively`).
    pub fn commuting_read(self, key: &ObjectKey, kind: EventKind) -> bool {
        self == Equivalence::ReadsCommute
            && match key {
                ObjectKey::Word(..) => reads_only(kind),
                ObjectKey::Sem(..) | ObjectKey::Barrier(..) | ObjectKey::RwLock(..) => kind.commutes_natively(),
                _ => false,
            }
    }
}

/// Whether an event of this kind only reads its words: a plain or atomic load, or an operation
/// on a mutex, whose word it reads (see `dependence`: its order with other operations on the
/// mutex is the mutex's).
pub fn reads_only(kind: EventKind) -> bool {
    match kind {
        EventKind::Access(k) => !k.writes(),
        EventKind::Lock | EventKind::Unlock | EventKind::TryLock | EventKind::TryLockFail => true,
        _ => false,
    }
}

/// Per object, the events of one trace (by index) that a later event on it is dependent on.
#[derive(Clone, Debug)]
pub struct LastAccesses {
    eq: Equivalence,
    /// Per object, its last event (for a word under reads-commute: its last write).
    last: HashMap<ObjectKey, usize>,
    /// Per word under reads-commute, the last read of each thread since the word's last write.
    reads: HashMap<ObjectKey, Vec<(ThreadId, usize)>>,
}

impl LastAccesses {
    pub fn new(eq: Equivalence) -> LastAccesses {
        LastAccesses { eq, last: HashMap::new(), reads: HashMap::new() }
    }

    /// Push onto `out` the earlier events that `e`, on `key`, is dependent on through `key`
    /// (the latest of each thread is enough: a thread's earlier ones precede it in program
    /// order).
    pub fn before(&self, key: &ObjectKey, e: &Event, out: &mut Vec<usize>) {
        out.extend(self.last.get(key).copied());
        if !self.eq.commuting_read(key, e.kind) {
            if let Some(rs) = self.reads.get(key) {
                out.extend(rs.iter().map(|&(_, i)| i));
            }
        }
    }

    /// `e`, the trace's event `i`, is on `key`: the last there from now on.
    pub fn record(&mut self, key: ObjectKey, e: &Event, i: usize) {
        if self.eq.commuting_read(&key, e.kind) {
            let rs = self.reads.entry(key).or_default();
            match rs.iter_mut().find(|(t, _)| *t == e.tid) {
                Some(r) => r.1 = i,
                None => rs.push((e.tid, i)),
            }
        } else {
            if let Some(rs) = self.reads.get_mut(&key) {
                rs.clear();
            }
            self.last.insert(key, i);
        }
    }
}

/// Whether events `a` and `b`, both on `key`, are dependent through it.
pub fn conflict_on(eq: Equivalence, key: &ObjectKey, a: EventKind, b: EventKind) -> bool {
    !(eq.commuting_read(key, a) && eq.commuting_read(key, b))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::access_kind::AccessKind;
    use crate::event::ObjectRef;
    use crate::logical_addr::Region;

    fn access(tid: u32, kind: AccessKind) -> Event {
        Event { tid: ThreadId(tid), k: 0, site: None, kind: EventKind::Access(kind), object: ObjectRef::Memory { addr: 8, size: 4, logical: None }, value: None }
    }

    /// Trace `W0 R1 R2 R1 W2 R0`: under reads-commute the reads follow the write before them and
    /// the next write follows them all (each thread's latest); under Mazurkiewicz each event
    /// follows the one before.
    #[test]
    fn a_read_follows_the_last_write_and_a_write_the_reads_since() {
        let w = ObjectKey::Word(Region::Static, 2);
        let trace = [access(0, AccessKind::Store), access(1, AccessKind::Load), access(2, AccessKind::AtomicLoad), access(1, AccessKind::Load), access(2, AccessKind::Rmw), access(0, AccessKind::Load)];
        for (eq, want) in [
            (Equivalence::ReadsCommute, vec![vec![], vec![0], vec![0], vec![0], vec![0, 3, 2], vec![4]]),
            (Equivalence::Mazurkiewicz, vec![vec![], vec![0], vec![1], vec![2], vec![3], vec![4]]),
        ] {
            let mut last = LastAccesses::new(eq);
            for (i, e) in trace.iter().enumerate() {
                let mut out = Vec::new();
                last.before(&w, e, &mut out);
                assert_eq!(out, want[i], "{eq:?}, event {i}");
                last.record(w, e, i);
            }
        }
    }

    #[test]
    fn only_reads_of_words_commute() {
        let (w, m) = (ObjectKey::Word(Region::Static, 2), ObjectKey::Mutex(Region::Static, 8));
        let (load, store) = (EventKind::Access(AccessKind::Load), EventKind::Access(AccessKind::Store));
        assert!(!conflict_on(Equivalence::ReadsCommute, &w, load, EventKind::Access(AccessKind::AtomicLoad)));
        assert!(conflict_on(Equivalence::ReadsCommute, &w, load, store));
        assert!(conflict_on(Equivalence::ReadsCommute, &w, EventKind::Access(AccessKind::CmpXchg), load));
        assert!(conflict_on(Equivalence::ReadsCommute, &m, EventKind::Lock, EventKind::Lock));
        assert!(!conflict_on(Equivalence::ReadsCommute, &w, EventKind::Unlock, EventKind::Lock));
        assert!(conflict_on(Equivalence::ReadsCommute, &w, EventKind::Unlock, EventKind::Access(AccessKind::Free)));
        assert!(conflict_on(Equivalence::Mazurkiewicz, &w, load, load));
        assert_eq!(Equivalence::from_name("mazurkiewicz"), Some(Equivalence::Mazurkiewicz));
        assert_eq!(Equivalence::from_name(Equivalence::default().name()), Some(Equivalence::ReadsCommute));
    }
}
