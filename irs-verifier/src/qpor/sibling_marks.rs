//! What pruning `U` (Alg. 1 line 13, 000 §3) found at one node of the exploration's path, kept
//! for the next prune. A cache only: it never decides what a prune keeps beyond what a fresh
//! search of the node's siblings would.
//!
//! `U` is pruned to the events the comb can still use (see `Verifier::maybe_prune`): the path's
//! events and sleep sets (the node's *anchors*), their siblings in the memory and mutex trees
//! that are compatible with the path's prefix above the node, and the histories of all these.
//! While a node stays on the path its prefix does not change, so a sibling found compatible at
//! one prune still is at the next, and is still in `U` (it was kept); only the siblings added
//! to the anchors' child lists since need a look. On DISP(5,4) a shallow node's anchors gather
//! hundreds of compatible siblings while the subtree below it is explored (one node's sibling
//! list held ~300 of them, with ~8,000 events of history between them, for half the prunes);
//! not testing them again at every prune saves 1.3% of the verifier's instructions and 1.8% of
//! its last-level cache misses there (cachegrind, whole run).
//!
//! The siblings' histories are remembered the same way: the events of their histories outside
//! the prefix (a set closed under causality but for the prefix, which is part of `C` and kept
//! anyway), so that a prune marks them without walking up from every sibling again; only the
//! histories of the siblings new since the last prune are walked.

use crate::fx_hash::FxHashSet;
use crate::object_table::{ObjIdx, ObjectTable};
use crate::thread_names::StableThread;
use crate::unfolding::{Configuration, EventIdx, Unfolding};

pub struct SiblingMarks {
    /// The child lists of the anchors' predecessors on their memory and mutex objects: the
    /// object, the predecessor, the anchor's thread (whose own siblings are not looked at, see
    /// `comb`) and how many entries have been looked at.
    lists: Vec<(ObjIdx, Option<EventIdx>, StableThread, usize)>,
    /// The siblings found compatible with the prefix and their histories outside it (the
    /// siblings themselves are outside it: in conflict with an anchor, which the prefix has or
    /// is compatible with).
    history: FxHashSet<EventIdx>,
}

impl SiblingMarks {
    /// For a node whose anchors (those not anchored higher up) are `anchors`.
    pub fn new(u: &Unfolding, objects: &ObjectTable, anchors: &[EventIdx]) -> SiblingMarks {
        let mut lists = Vec::new();
        for &a in anchors {
            let me = u.thread(a);
            lists.extend(crate::comb::sibling_objects(u, objects, a).map(|(o, p)| (o, p, me, 0)));
            if u.event_kind(a) == shared_proto::EventKind::Nondet {
                // Its other values are siblings of its own thread (see `comb`).
                let own = u.action_of(a).own;
                lists.push((own, u.pred(a, own), StableThread(u32::MAX), 0));
            }
        }
        SiblingMarks { lists, history: FxHashSet::default() }
    }

    /// The siblings compatible with `prefix` (the path above the node) with their histories
    /// outside it, each event given once to `mark`: those found before, and those found among
    /// the entries added to the lists since. The events given are closed under causality but
    /// for `prefix`'s.
    pub fn scan(&mut self, u: &Unfolding, prefix: &Configuration, mut mark: impl FnMut(EventIdx)) {
        let mut stack = Vec::new();
        for (o, p, me, seen) in self.lists.iter_mut() {
            let list = u.child_entries(*o, *p);
            stack.extend(list[*seen..].iter().filter(|c| c.thread != *me && prefix.compatible_outside(u, c.event, None)).map(|c| c.event));
            *seen = list.len();
        }
        // The new siblings' histories, up to the prefix or what is known already.
        while let Some(x) = stack.pop() {
            if prefix.contains(x) || !self.history.insert(x) {
                continue;
            }
            stack.extend(u.preds(x).filter_map(|(_, p)| p));
        }
        self.history.iter().for_each(|&x| mark(x));
    }

    /// `U` was just pruned, after a [`scan`](Self::scan): what is left in the lists has been
    /// looked at (the anchors and their predecessors were kept).
    pub fn pruned(&mut self, u: &Unfolding) {
        for (o, p, _, seen) in self.lists.iter_mut() {
            *seen = u.child_entries(*o, *p).len();
        }
    }
}
