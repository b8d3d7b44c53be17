//! The check behind race-free words (see `race_free_words`): a word explored without a tree of
//! its own must have its dependent accesses ordered by synchronisation in every execution
//! explored (under Mazurkiewicz one causal chain; under reads-commute a chain of writes, each
//! read after the write before it and before the write after it); the walk checks each access
//! against those it must follow and makes a word that fails racy (an object from then on; the
//! exploration starts over). Only a pair with a write is a
//! data race and reported; a word made racy by unordered reads is watched, as an object, until
//! a write races with one of its accesses (reported once then).

use super::{site_text, Verifier};
use crate::object_table::ObjIdx;
use crate::unfolding::{ActionIdx, EventIdx};
use shared_proto::equivalence::{reads_only, Equivalence};
use shared_proto::{EventKind, ThreadId};

/// An access to a race-free word in the path: by the thread whose object is `own`, before its
/// event at depth `depth` in the thread's tree.
#[derive(Clone, Copy, Debug)]
pub(super) struct At {
    own: ObjIdx,
    depth: u32,
}

/// The accesses to a race-free word that its next access must follow: the last write (under
/// Mazurkiewicz, the last access, with whether it writes) and, under reads-commute, each
/// thread's last read since.
#[derive(Clone, Debug, Default)]
pub(super) struct WordLog {
    write: Option<(At, bool)>,
    reads: Vec<At>,
}

/// How to undo one access recorded in a [`WordLog`] (on backtracking).
#[derive(Debug)]
pub(super) enum Undo {
    /// A read recorded at `reads[at]`, over `prev` (`None`: pushed there).
    Read { x: ObjIdx, at: usize, prev: Option<At> },
    /// A write (or an access under Mazurkiewicz) recorded over the whole of `prev`.
    Whole { x: ObjIdx, prev: WordLog },
}

/// Whether an operation of this kind may write its words (a data race needs a write): anything
/// but a plain or atomic load, an atomic block included (the one definition of a read is
/// `shared_proto::equivalence::reads_only`).
pub(super) fn writes(kind: EventKind) -> bool {
    !reads_only(kind)
}

impl Verifier<'_> {
    /// The check that keeps a race-free word's accesses one causal chain (see
    /// `race_free_words`), and the record it checks the next one against. Step `s` (by `tid`,
    /// whose object is `own`) accesses the race-free words of action `a` with the history
    /// `[q]` (its event's, or for a step that is no event its thread's last event's) and before
    /// its thread's event at depth `after` in the thread's tree. The last access to each word
    /// (by thread `t`, before `t`'s event at depth `d`) must be in the causal past: `t` is the
    /// same thread, or `[q]` holds `t`'s event at depth `d`. (A thread's events in `C` form one
    /// chain, so depths decide.) A word that fails becomes racy. For an atomic block, whose
    /// action does not name its words, they are `block_words`.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn record_accesses(&mut self, a: ActionIdx, block_words: &[ObjIdx], own: ObjIdx, q: Option<EventIdx>, after: u32, s: usize, tid: ThreadId) {
        let n = if block_words.is_empty() { self.u.actions(a).elided.len() } else { block_words.len() };
        for i in 0..n {
            let x = if block_words.is_empty() { self.u.actions(a).elided[i] } else { block_words[i] };
            self.check_access(a, x, own, q, after, s, tid, false);
        }
    }

    /// One access of action `a` (by the thread whose object is `own`, with the history `[q]`,
    /// before its thread's event at depth `after`) to the word `x`: checked against the
    /// accesses to the word it must follow (see `record_accesses`), and recorded. Under
    /// reads-commute a read must follow the last write, and a write the last write and the
    /// reads since; under Mazurkiewicz every access the last. `watched`: `x` is an object
    /// already, made racy by unordered reads; an unordered pair with a write is then reported
    /// (once), and changes nothing else.
    #[allow(clippy::too_many_arguments)]
    fn check_access(&mut self, a: ActionIdx, x: ObjIdx, own: ObjIdx, q: Option<EventIdx>, after: u32, s: usize, tid: ThreadId, watched: bool) {
        let slot = x.0 as usize;
        if self.accesses.len() <= slot {
            self.accesses.resize_with(slot + 1, WordLog::default);
        }
        let writes = writes(self.u.actions(a).kind);
        let commutes = self.opts.equivalence == Equivalence::ReadsCommute && !writes;
        let ordered = |at: &At| at.own == own || self.u.depth_on(q.and_then(|q| self.u.last_on(q, at.own)), at.own) >= at.depth;
        let log = &self.accesses[slot];
        let mut unordered = log.write.filter(|(w, _)| !ordered(w)).map(|(_, wrote)| wrote);
        if !commutes && unordered.is_none() && log.reads.iter().any(|r| !ordered(r)) {
            unordered = Some(false);
        }
        if let Some(wrote) = unordered {
            let action = self.u.actions(a);
            let at = site_text(self.ex, action.site);
            let kind = action.kind.name();
            let why = || format!("the {kind}{at} by T{} at step {s} is not ordered after the last access to its word by another thread (a data race)", tid.0);
            let conflicting = writes || wrote;
            if watched {
                if conflicting {
                    self.words.report_race(why());
                    self.watched[slot] = false;
                }
            } else if self.words.racy(self.objects.key(x), conflicting, why) && !conflicting {
                // Two reads are no data race, but under Mazurkiewicz the exploration orders
                // them all the same: the word becomes an object, unreported, and its accesses
                // are watched for a race with a write.
                if self.watched.len() <= slot {
                    self.watched.resize(slot + 1, false);
                }
                self.watched[slot] = true;
            }
        }
        let me = At { own, depth: after };
        let log = &mut self.accesses[slot];
        if commutes {
            match log.reads.iter().position(|r| r.own == own) {
                Some(i) => {
                    self.access_undo.push(Undo::Read { x, at: i, prev: Some(log.reads[i]) });
                    log.reads[i] = me;
                }
                None => {
                    self.access_undo.push(Undo::Read { x, at: log.reads.len(), prev: None });
                    log.reads.push(me);
                }
            }
        } else {
            let prev = std::mem::take(log);
            log.write = Some((me, writes));
            self.access_undo.push(Undo::Whole { x, prev });
        }
    }

    /// Undo the last access recorded by `check_access`.
    pub(super) fn undo_access(&mut self, undo: Undo) {
        match undo {
            Undo::Read { x, at, prev: Some(r) } => self.accesses[x.0 as usize].reads[at] = r,
            Undo::Read { x, at, prev: None } => self.accesses[x.0 as usize].reads.truncate(at),
            Undo::Whole { x, prev } => self.accesses[x.0 as usize] = prev,
        }
    }

    /// The accesses of event `e` (of action `a`) to watched words (see `watched`): its history
    /// apart from the word itself is its thread predecessor's, and it is its thread's event at
    /// its own depth.
    pub(super) fn check_watched(&mut self, a: ActionIdx, e: EventIdx, own: ObjIdx, s: usize, tid: ThreadId) {
        for i in 0..self.u.actions(a).objects.len() {
            let x = self.u.actions(a).objects[i];
            if self.watched.get(x.0 as usize).copied().unwrap_or(false) {
                let (q, after) = (self.u.pred(e, own), self.u.depth_on(Some(e), own));
                self.check_access(a, x, own, q, after, s, tid, true);
            }
        }
    }
}
