//! Causality and conflict between events (000 §5.1, Theorem 6, generalised from threads and
//! locks to every object): each event's frontier, the last event on every object of its
//! history, is `tmax`/`lmax`; `a ≤ b` iff `a` is an ancestor-or-self of `b`'s last event on an
//! object of `a`, and `a # b` iff on some object both touch their last events are incomparable.
//! Also whether an event's history is compatible with a configuration, the comb's filter (000
//! §5, step 3). Queries only: nothing here changes `U`.

use super::{EventIdx, Unfolding};
use crate::object_table::ObjIdx;

impl Unfolding {
    /// The last event on `o` in `[e]`.
    pub fn last_on(&self, e: EventIdx, o: ObjIdx) -> Option<EventIdx> {
        self.ev(e).frontier.get(o).map(EventIdx)
    }

    /// `(object, last event on it in [e])` for every object `[e]` touches, by object.
    pub fn frontier(&self, e: EventIdx) -> impl Iterator<Item = (ObjIdx, EventIdx)> + '_ {
        self.ev(e).frontier.iter().map(|(o, x)| (o, EventIdx(x)))
    }

    pub(super) fn comparable(&self, o: ObjIdx, a: EventIdx, b: EventIdx) -> bool {
        if a == b {
            // The common case: histories that share their last event on `o`.
            return true;
        }
        let (da, db) = (self.depth(a, o), self.depth(b, o));
        if da <= db {
            self.ancestor_at(o, b, da) == a
        } else {
            self.ancestor_at(o, a, db) == b
        }
    }

    /// Causality: `a ≤ b`.
    pub fn le(&self, a: EventIdx, b: EventIdx) -> bool {
        if a == b {
            return true;
        }
        let o = self.objects(a)[0];
        self.last_on(b, o).is_some_and(|l| self.tree_le(o, a, l))
    }

    /// Conflict: `[a] ∪ [b]` is not a configuration.
    pub fn conflict(&self, a: EventIdx, b: EventIdx) -> bool {
        // Objects whose last events are the same are comparable; the rest are asked.
        self.ev(a).frontier.any_differing(&self.ev(b).frontier, |o, x, y| !self.comparable(o, EventIdx(x), EventIdx(y)))
    }

    /// `[e] ∪ C` is a configuration, for an event `e ∉ C`, where `last` gives `C`'s last event
    /// per object with its depth in the object's tree, and `in_c` tells membership in `C`.
    ///
    /// `C`'s events on an object form the chain from the root to its last one there, `c`; so an
    /// event `x` on that object is comparable with `c` iff `x ∈ C` (then `x ≤ c`) or `x` descends
    /// from `c`. Membership is a bit; only events outside `C` need a walk up their tree.
    /// `checked`: an object whose immediate predecessor the caller has already found to fit.
    pub fn compatible_outside(&self, e: EventIdx, last: impl Fn(ObjIdx) -> Option<(EventIdx, u32)>, in_c: impl Fn(EventIdx) -> bool, checked: Option<ObjIdx>) -> bool {
        let fits = |o: ObjIdx, x: EventIdx, (c, dc): (EventIdx, u32)| x == c || in_c(x) || {
            let dx = self.depth(x, o);
            dx > dc && self.ancestor_at(o, x, dc) == c
        };
        // A quick necessary condition first, on the immediate predecessors only: most events
        // that are not compatible follow a predecessor that `C` has already gone past (then `C`
        // holds another event right after it, as `e ∉ C`).
        let quick = self.ev(e).nodes.iter().filter(|n| Some(n.obj) != checked).all(|n| match (last(n.obj), n.pred) {
            (None, _) => true,
            (Some(_), None) => false,
            (Some(c), Some(p)) => c.0 == p || (!in_c(p) && fits(n.obj, p, c)),
        });
        quick && self.frontier(e).all(|(o, x)| x == e || last(o).is_none_or(|c| fits(o, x, c)))
    }
}

#[cfg(test)]
mod tests {
    use super::super::test_support::*;
    use super::super::*;
    use crate::object_table::ObjIdx;
    use crate::thread_names::StableThread;
    use shared_proto::EventKind;

    /// Two threads (objects 0 and 1) write one word (object 9) in either order.
    #[test]
    fn causality_and_conflict_on_a_shared_word() {
        let mut u = Unfolding::new(2);
        let a = act(&mut u, 0, &[0, 9]);
        let b = act(&mut u, 1, &[1, 9]);
        let (a1, _) = u.event(a, &[None, None], EventKind::Lock, 0);
        let (b1, _) = u.event(b, &[None, None], EventKind::Lock, 0);
        let (b2, _) = u.event(b, &[None, Some(a1)], EventKind::Lock, 0);
        let (a2, _) = u.event(a, &[None, Some(b1)], EventKind::Lock, 0);
        assert_eq!(u.event(a, &[None, None], EventKind::Lock, 0), (a1, false), "hash-consed");
        assert!(u.conflict(a1, b1) && u.conflict(a1, a2) && u.conflict(b2, b1) && u.conflict(b2, a2));
        assert!(u.le(a1, b2) && !u.le(b2, a1) && u.le(b1, a2) && !u.le(a1, a2));
        assert!(!u.conflict(a1, b2));
        assert_eq!(u.children(ObjIdx(9), None).collect::<Vec<_>>(), [a1, b1]);
        assert_eq!(u.children_of_others(ObjIdx(9), None, StableThread(0)).map(|c| c.event).collect::<Vec<_>>(), [b1]);
    }


    /// Random runs of 3 threads over 4 shared words, hash-consed into one unfolding: every
    /// event's frontier (built by copying a predecessor's when its history holds the others',
    /// merging otherwise) is the last event per object of its history, found by brute force.
    #[test]
    fn frontiers_are_the_last_events_of_histories() {
        // Words in one chunk of the frontiers, and words in chunks of their own.
        for stride in [1, 50] {
            frontiers_are_the_last_events_of_histories_with(stride);
        }
    }

    fn frontiers_are_the_last_events_of_histories_with(stride: u64) {
        let mut u = Unfolding::new(2);
        let mut rng = Rng(0x2545_f491_4f6c_dd1d);
        let mut all = Vec::new();
        for _run in 0..40 {
            all.extend(random_run_spread(&mut u, &mut rng, 12, 4, true, stride).into_iter().map(|(e, _)| e));
        }
        let (mut dominated, mut merged) = (0, 0);
        let mut histories = Vec::new();
        for &e in &all {
            let (mut history, mut stack) = (std::collections::HashSet::new(), vec![e]);
            while let Some(x) = stack.pop() {
                if history.insert(x) {
                    stack.extend(u.preds(x).filter_map(|(_, p)| p));
                }
            }
            let preds: Vec<EventIdx> = u.preds(e).filter_map(|(_, p)| p).collect();
            if preds.len() >= 2 {
                let inside = preds.iter().any(|&p| preds.iter().all(|&q| u.le(q, p)));
                (dominated, merged) = (dominated + usize::from(inside), merged + usize::from(!inside));
            }
            let mut expected: Vec<(ObjIdx, EventIdx)> = Vec::new();
            for &x in &history {
                for &o in u.objects(x) {
                    match expected.iter_mut().find(|(p, _)| *p == o) {
                        Some(slot) if u.depth(x, o) > u.depth(slot.1, o) => slot.1 = x,
                        Some(_) => {}
                        None => expected.push((o, x)),
                    }
                }
            }
            expected.sort();
            assert_eq!(u.frontier(e).collect::<Vec<_>>(), expected, "frontier of {e:?}");
            histories.push((e, history));
        }
        assert!(dominated > 10 && merged > 10, "both ways of building a frontier are taken: {dominated}, {merged}");
        // Conflict (which compares frontiers chunk by chunk) against its definition: `[a] ∪
        // [b]` is no configuration iff on some object its events are not one chain.
        let (mut conflicts, mut compatible) = (0, 0);
        for (i, (a, ha)) in histories.iter().enumerate().step_by(3) {
            for (b, hb) in histories.iter().skip(i % 5).step_by(7) {
                let union: Vec<EventIdx> = ha.union(hb).copied().collect();
                let chain = |o: ObjIdx| {
                    let on: Vec<EventIdx> = union.iter().copied().filter(|&x| u.objects(x).contains(&o)).collect();
                    on.iter().all(|&x| on.iter().all(|&y| u.tree_le(o, x, y) || u.tree_le(o, y, x)))
                };
                let objs: std::collections::BTreeSet<ObjIdx> = union.iter().flat_map(|&x| u.objects(x).iter().copied()).collect();
                let expected = !objs.into_iter().all(chain);
                assert_eq!(u.conflict(*a, *b), expected, "conflict of {a:?} and {b:?}");
                (conflicts, compatible) = (conflicts + usize::from(expected), compatible + usize::from(!expected));
            }
        }
        assert!(conflicts > 100 && compatible > 100, "{conflicts} in conflict, {compatible} not");
    }

}
