//! The readers of each word, for the reads-commute equivalence (DESIGN §3's refinement).
//!
//! A word that is an object (see `race_free_words`) has one copy per thread that reads it: a
//! read by `t` is an event on the copy `(w, t)` only, a write an event on the word and on every
//! copy. So two reads by different threads share no object (they commute), a read and a write
//! share the reader's copy, two writes share the word, and on each copy the events form one
//! chain in every configuration (the writes, and one thread's reads, which program order
//! chains): the copies are objects as QPOR's trees need them (000 §5: every object's events are
//! totally ordered in a configuration), and `cex` moves a read up its copy (before an earlier
//! write) and a write up the word or any copy (before an earlier write, or read by that copy's
//! thread) exactly as it moves an access up a word.
//!
//! A write's objects are fixed when its action is made, so the readers must be known by then.
//! They are learnt as the exploration goes (every read is noted here, of race-free words too,
//! so a word is usually known by the time it becomes an object), and kept across restarts.
//! When a thread reads a word that a write of the current exploration was made without it, the
//! exploration starts over (as for a race-free word that races). That is complete by the
//! argument `race_free_words` makes for its check: take an execution with a read `r` of `w` by
//! an unknown reader, the first in its order. The events before `r` are a configuration of the
//! explored unfolding (every read in it is by a known reader, so the dependence used is the
//! real one on them), contained in an explored maximal configuration, in which `r`'s thread is
//! at the same state after it and performs `r` too: the walk of that execution notes the
//! reader and asks for the restart. The same argument per subtree shows that a prefix told
//! safe before a restart is safe. After [`MAX_READER_RESTARTS`], reads of a word that is an
//! object are ordered as every access is under Mazurkiewicz (a coarser relation: sound, with
//! more traces), and the report says so.

use crate::fx_hash::FxHashMap;
use crate::object_table::ObjIdx;
use crate::thread_names::StableThread;

/// Restarts for readers found late, before reads of words that are objects are ordered.
pub const MAX_READER_RESTARTS: u64 = 8;

/// What the exploration knows of who reads which word.
#[derive(Default)]
pub struct WordReaders {
    /// Reads commute (`--equivalence reads-commute`, until too many restarts).
    on: bool,
    /// Per word (its object), the threads known to read it, in the order found.
    readers: FxHashMap<ObjIdx, Vec<StableThread>>,
    /// Words a write of the current exploration is on (its action names their copies).
    written: FxHashMap<ObjIdx, ()>,
    restart: Option<String>,
    restarts: u64,
    /// Primitives whose commuting operations are ordered after all (a barrier that more threads
    /// use than its count: an arrival can disable another), kept across restarts.
    ordered: FxHashMap<ObjIdx, ()>,
    /// Why the exploration must start over for a primitive newly ordered (not counted as a
    /// reader's restart).
    reorder: Option<String>,
}

impl WordReaders {
    pub fn new(reads_commute: bool) -> WordReaders {
        WordReaders { on: reads_commute, ..WordReaders::default() }
    }

    /// Whether reads of a word that is an object go to their thread's copy.
    pub fn on(&self) -> bool {
        self.on
    }

    /// Thread `t` reads `word` (an object or not): if the word was written without `t`'s copy
    /// in this exploration, it must start over (`why` says where).
    pub fn read(&mut self, word: ObjIdx, t: StableThread, why: impl FnOnce() -> String) {
        let rs = self.readers.entry(word).or_default();
        if rs.contains(&t) {
            return;
        }
        rs.push(t);
        if self.on && self.written.contains_key(&word) {
            self.restart.get_or_insert_with(why);
        }
    }

    /// A write's action is on `word` and the copies of its readers known now.
    pub fn wrote(&mut self, word: ObjIdx) {
        self.written.insert(word, ());
    }

    /// The threads known to read `word`.
    pub fn readers(&self, word: ObjIdx) -> &[StableThread] {
        self.readers.get(&word).map_or(&[], |v| v.as_slice())
    }

    /// Order `primitive`'s commuting operations from now on: if an operation of the current
    /// exploration was made on it (its init, on every copy, comes first), the exploration
    /// starts over.
    pub fn order(&mut self, primitive: ObjIdx, why: impl FnOnce() -> String) {
        if self.ordered.insert(primitive, ()).is_none() && self.written.contains_key(&primitive) {
            self.reorder.get_or_insert_with(why);
        }
    }

    /// Whether `primitive`'s commuting operations are ordered (see [`order`](Self::order)).
    pub fn ordered(&self, primitive: ObjIdx) -> bool {
        self.ordered.contains_key(&primitive)
    }

    /// Why the exploration must start over, if it must.
    pub fn restart_needed(&self) -> Option<&str> {
        self.restart.as_deref().or(self.reorder.as_deref())
    }

    /// The exploration starts over (for whatever reason): no write is made yet. If it is for
    /// a reader found late, count it; after [`MAX_READER_RESTARTS`], reads are ordered.
    pub fn restarted(&mut self) {
        self.written.clear();
        self.reorder = None;
        if self.restart.take().is_some() {
            self.restarts += 1;
            if self.restarts >= MAX_READER_RESTARTS {
                self.on = false;
            }
        }
    }

    pub fn restarts(&self) -> u64 {
        self.restarts
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_reader_found_after_a_write_starts_the_exploration_over_once() {
        let (w, v) = (ObjIdx(1), ObjIdx(2));
        let mut r = WordReaders::new(true);
        r.read(w, StableThread(1), || "first".into());
        r.wrote(w);
        r.read(w, StableThread(1), || "again".into());
        r.read(v, StableThread(2), || "never written".into());
        assert!(r.restart_needed().is_none(), "known reader, or a word not written");
        r.read(w, StableThread(2), || "T2 reads w".into());
        r.read(w, StableThread(3), || "T3 reads w".into());
        assert_eq!(r.restart_needed(), Some("T2 reads w"));
        r.restarted();
        assert_eq!((r.restart_needed(), r.restarts(), r.readers(w)), (None, 1, &[StableThread(1), StableThread(2), StableThread(3)][..]));
        r.read(w, StableThread(4), || "before any write".into());
        assert!(r.restart_needed().is_none(), "no write made since the restart");
    }

    #[test]
    fn after_the_last_restart_allowed_reads_are_ordered() {
        let mut r = WordReaders::new(true);
        for t in 0..MAX_READER_RESTARTS as u32 {
            assert!(r.on());
            r.wrote(ObjIdx(0));
            r.read(ObjIdx(0), StableThread(t), || format!("reader {t}"));
            r.restarted();
        }
        assert!(!r.on());
        r.wrote(ObjIdx(0));
        r.read(ObjIdx(0), StableThread(99), String::new);
        assert!(r.restart_needed().is_none(), "no more restarts");
        assert!(!WordReaders::new(false).on());
    }
}
