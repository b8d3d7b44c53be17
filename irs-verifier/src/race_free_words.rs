//! Race-free words: memory words explored without a tree of their own, and the check that keeps
//! that sound.
//!
//! DESIGN §3 makes every access to a word dependent on every other access to it, and the
//! verifier keeps that equivalence: it counts the same traces. But on a program whose shared
//! words are accessed under locks (all of the QPOR paper's Table 1 programs and our families),
//! two accesses to a word by different threads are always ordered by the synchronisation
//! between them (an unlock and the next lock of the mutex, a create, a join), so their order is
//! fixed by the order of the synchronisation events, and an event on the word adds nothing but
//! cost: the walk made one per access (half to two thirds of all walked steps), each with a
//! node in the word's tree, a frontier entry, and a search for conflicting extensions that finds
//! none. Peer tools on the same programs (DPU, QPOR paper §6) make no events of memory accesses
//! at all.
//!
//! So a word starts *race-free*: an access to it is an event of its thread only (the word is
//! kept in the action as [`crate::unfolding::Action::elided`], so that an access to another
//! word is another action), and the walk checks every access against the last access to the
//! word in `C`: the last one must be in the new access's causal past (`le`). If every access
//! passes, the accesses to the word form one causal chain in every explored execution, and the
//! traces (and the states, and the violations) are exactly those of the full dependence.
//!
//! When an access fails the check (a data race, or a read-read pair no synchronisation orders)
//! or the word is accessed atomically, the word becomes *racy* for the rest of the
//! verification: an object with a tree, as DESIGN §3 says; and the exploration starts over,
//! because what it built so far assumed the word race-free (after [`MAX_RESTARTS`], with every
//! word an object). That is complete: if some execution
//! has such a pair, take the first access `a` (in that execution's order) unordered with an
//! earlier access to its word. Before `a`, every race-free word's accesses form a chain, so the
//! events before `a` are a configuration of the explored unfolding, with the states the program
//! had; every configuration is contained in an explored maximal one, whose thread of `a` is at
//! the same state after it and performs `a` too, unordered with the same earlier access; the
//! walk of that execution fails the check at `a` or before. The same argument per subtree shows
//! that a subtree explored without a failed check holds no race on a race-free word: a prefix
//! published safe stays safe.

use crate::fx_hash::FxHashMap;

/// Starts over allowed before every word is made an object at once (a program with many racy
/// words found one at a time would otherwise start over once per word).
pub const MAX_RESTARTS: u64 = 4;
use shared_proto::dependence::ObjectKey;
use shared_proto::{AccessKind, EventKind};

/// What the exploration knows of a word.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum State {
    /// Every access so far ordered by synchronisation: no tree.
    RaceFree,
    /// An object with a tree of its own.
    Racy,
    /// Accessed inside atomic blocks and racing with accesses outside them: every access to it
    /// is an event of the atomic blocks' object, so that the blocks stay single events on two
    /// objects (their thread and the blocks' object) and the order of the word's accesses is
    /// the order on that object.
    Guarded,
}

struct Word {
    state: State,
    /// Accessed inside an atomic block: once it races, it is guarded, not racy.
    in_block: bool,
}

/// How one access uses its word (see [`RaceFreeWords::classify`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WordUse {
    /// Not an object of the access: race-free, checked.
    Elided,
    /// The word is an object of the access.
    Object,
    /// The atomic blocks' object stands for the word.
    Guarded,
}

/// What the verifier knows of the program's words (it lives across restarts).
#[derive(Default)]
pub struct RaceFreeWords {
    /// Off: every word is an object (`irs verify --no-race-free-words`).
    off: bool,
    words: FxHashMap<ObjectKey, Word>,
    /// Why the exploration must start over, once a word that had been race-free became racy.
    restart: Option<String>,
    /// The data races found, each once: why a word that had been race-free became racy, where
    /// one of the two accesses writes (for the report: data races are worth knowing about even
    /// where no assertion fails).
    found: Vec<String>,
    restarts: u64,
}

impl RaceFreeWords {
    pub fn new(on: bool) -> RaceFreeWords {
        RaceFreeWords { off: !on, ..RaceFreeWords::default() }
    }

    /// Whether an access of `kind` to `word` is made without the word as an object: the word is
    /// race-free so far, and the access is not atomic (an atomic access synchronises by the
    /// word itself, so its word is racy from the first).
    /// `at` says where the access is, for the report, should an atomic one make its word racy.
    #[cfg(test)]
    pub fn elide(&mut self, word: ObjectKey, kind: EventKind, at: impl FnOnce() -> String) -> bool {
        self.classify(word, kind, false, at) == WordUse::Elided
    }

    /// How an access of `kind` to `word` uses it; `in_block`: the access is part of an atomic
    /// block. A block never has a word as an object (only the blocks' object): a racy word one
    /// accesses becomes guarded (and the exploration starts over, as it has used the word as an
    /// object so far).
    pub fn classify(&mut self, word: ObjectKey, kind: EventKind, in_block: bool, at: impl FnOnce() -> String) -> WordUse {
        let atomic = matches!(kind, EventKind::Access(AccessKind::AtomicLoad | AccessKind::AtomicStore | AccessKind::Rmw | AccessKind::CmpXchg | AccessKind::UnchangedUpdate));
        if self.off && !in_block && !self.words.contains_key(&word) {
            // Every word an object: only those of atomic blocks need remembering.
            return WordUse::Object;
        }
        // A word first accessed atomically is racy from the first (nothing to redo).
        let fresh = match (in_block, self.off || atomic) {
            (true, true) => State::Guarded,
            (false, true) => State::Racy,
            (_, false) => State::RaceFree,
        };
        let w = self.words.entry(word).or_insert(Word { state: fresh, in_block: false });
        w.in_block |= in_block;
        match (w.state, in_block) {
            (State::Guarded, _) => WordUse::Guarded,
            (State::Racy, true) => {
                w.state = State::Guarded;
                let why = format!("the {}{} accesses, inside an atomic block, a word that races outside them", kind.name(), at());
                self.report(&why);
                self.restart.get_or_insert(why);
                WordUse::Guarded
            }
            (State::Racy, false) => WordUse::Object,
            (State::RaceFree, true) => WordUse::Elided,
            (State::RaceFree, false) if atomic => {
                self.racy(word, true, || format!("the {}{} accesses atomically a word accessed plainly before (atomics synchronise by the word itself)", kind.name(), at()));
                self.classify(word, kind, false, String::new)
            }
            (State::RaceFree, false) => WordUse::Elided,
        }
    }

    /// `word` is racy from now on (guarded, if atomic blocks access it); if it had been
    /// race-free, the exploration must start over. `conflicting`: one of the two unordered
    /// accesses writes, a data race, reported; two reads are not (the word becomes an object
    /// all the same: the exploration's dependence counts reads).
    /// Whether it had been race-free.
    pub fn racy(&mut self, word: ObjectKey, conflicting: bool, why: impl FnOnce() -> String) -> bool {
        let fresh = if self.off { State::Racy } else { State::RaceFree };
        let w = self.words.entry(word).or_insert(Word { state: fresh, in_block: false });
        let was = w.state;
        w.state = if w.in_block { State::Guarded } else { State::Racy };
        if was != State::RaceFree {
            return false;
        }
        let why = why();
        if conflicting {
            self.report(&why);
        }
        self.restart.get_or_insert(why);
        true
    }

    /// A data race on a word that is racy already (made so by unordered reads): reported once.
    pub fn report_race(&mut self, why: String) {
        self.report(&why);
    }

    /// Report a race once: an access that spans words (a `long`, a struct copy) makes them
    /// racy with one message.
    fn report(&mut self, why: &str) {
        if !self.found.iter().any(|f| f == why) {
            self.found.push(why.to_string());
        }
    }

    /// Why the exploration must start over, if it must (asked once per walked step).
    pub fn restart_needed(&self) -> Option<&str> {
        self.restart.as_deref()
    }

    /// The exploration starts over; after [`MAX_RESTARTS`], with every word an object (or
    /// guarded, where atomic blocks access it).
    pub fn restarted(&mut self) {
        self.restart = None;
        self.restarts += 1;
        if self.restarts >= MAX_RESTARTS {
            self.off = true;
            for w in self.words.values_mut().filter(|w| w.state == State::RaceFree) {
                w.state = if w.in_block { State::Guarded } else { State::Racy };
            }
        }
    }

    pub fn restarts(&self) -> u64 {
        self.restarts
    }

    /// Why each word found racy after it had been taken as race-free became racy.
    pub fn found(&self) -> &[String] {
        &self.found
    }

    /// Words seen so far that are racy (guarded ones included), and race-free.
    pub fn counts(&self) -> (usize, usize) {
        let free = self.words.values().filter(|w| w.state == State::RaceFree).count();
        (self.words.len() - free, free)
    }

    /// Words guarded by the atomic blocks' object.
    pub fn guarded(&self) -> usize {
        self.words.values().filter(|w| w.state == State::Guarded).count()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use shared_proto::Region;

    fn word(w: u64) -> ObjectKey {
        ObjectKey::Word(Region::Static, w)
    }

    #[test]
    fn a_word_is_race_free_until_it_races_and_then_racy_for_good() {
        let mut r = RaceFreeWords::new(true);
        let load = EventKind::Access(AccessKind::Load);
        assert!(r.elide(word(1), load, String::new));
        assert!(r.restart_needed().is_none());
        r.racy(word(1), true, || "a race".into());
        assert_eq!(r.restart_needed(), Some("a race"));
        r.racy(word(1), true, || "again".into());
        assert_eq!(r.found(), ["a race"], "found once");
        assert!(!r.elide(word(1), load, String::new));
        r.restarted();
        assert!(r.restart_needed().is_none());
        assert!(!r.elide(word(1), load, String::new), "racy for good");
        assert_eq!((r.counts(), r.restarts()), ((1, 0), 1));
    }

    #[test]
    fn an_atomic_access_makes_its_word_racy_and_restarts_only_if_it_was_elided() {
        let mut r = RaceFreeWords::new(true);
        let rmw = EventKind::Access(AccessKind::Rmw);
        assert!(!r.elide(word(2), rmw, String::new));
        assert!(r.restart_needed().is_none(), "never elided: nothing to redo");
        assert!(!r.elide(word(2), EventKind::Access(AccessKind::Store), String::new));
        assert!(r.elide(word(3), EventKind::Access(AccessKind::Store), String::new));
        assert!(!r.elide(word(3), EventKind::Access(AccessKind::CmpXchg), || " at x.c:3".into()));
        assert_eq!(r.restart_needed(), Some("the cmpxchg at x.c:3 accesses atomically a word accessed plainly before (atomics synchronise by the word itself)"));
    }

    #[test]
    fn after_the_last_restart_allowed_every_word_is_an_object() {
        let mut r = RaceFreeWords::new(true);
        let store = EventKind::Access(AccessKind::Store);
        for w in 0..MAX_RESTARTS {
            assert!(r.elide(word(w), store, String::new) && r.elide(word(100), store, String::new));
            r.racy(word(w), true, || format!("race {w}"));
            assert!(r.restart_needed().is_some());
            r.restarted();
        }
        assert!(!r.elide(word(100), store, String::new) && !r.elide(word(101), store, String::new), "every word an object now");
        r.racy(word(100), true, || "late".into());
        assert!(r.restart_needed().is_none(), "no more restarts");
        assert_eq!(r.counts(), (MAX_RESTARTS as usize + 1, 0));
    }

    /// Unordered reads make a word an object (and start over) without a report; two words
    /// made racy by one access (a `long`) with one message are reported once.
    #[test]
    fn only_conflicting_pairs_are_reported_and_each_once() {
        let mut r = RaceFreeWords::new(true);
        let load = EventKind::Access(AccessKind::Load);
        assert!(r.elide(word(1), load, String::new));
        r.racy(word(1), false, || "two reads".into());
        assert_eq!(r.restart_needed(), Some("two reads"), "the word still becomes an object");
        assert!(r.found().is_empty(), "{:?}", r.found());
        assert!(r.elide(word(2), load, String::new) && r.elide(word(3), load, String::new));
        r.racy(word(2), true, || "the store of a long".into());
        r.racy(word(3), true, || "the store of a long".into());
        assert_eq!(r.found(), ["the store of a long"]);
        assert_eq!(r.counts(), (3, 0));
    }

    #[test]
    fn off_elides_nothing() {
        let mut r = RaceFreeWords::new(false);
        assert!(!r.elide(word(1), EventKind::Access(AccessKind::Load), String::new));
        assert_eq!(r.counts(), (0, 0));
    }
}
