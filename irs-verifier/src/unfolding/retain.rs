//! Removing events from `U` (the pruning of Alg. 1 line 13, 000 §3): every event outside a
//! causally closed set goes, its slot kept with its vectors for the events made next, and the
//! child lists and the key index are rebuilt from the survivors. It never keeps an event
//! without its history (asserted).

use super::events::key_hash;
use super::{EventIdx, Unfolding};

/// A pruned event's slot keeps child lists up to this long for the next event made in it.
const SPARE_CHILDREN: usize = 8;

impl Unfolding {
    /// Remove every event not in `keep`, which must be causally closed. The slots stay, with
    /// their vectors, for the events made next; the child lists and the hash index are rebuilt
    /// from the survivors in one pass each (cheaper than unlinking each removed event).
    pub fn retain(&mut self, keep: &[bool]) {
        let kept = |e: EventIdx| keep.get(e.0 as usize).copied().unwrap_or(false);
        for (i, a) in self.alive.iter_mut().enumerate() {
            if *a && !kept(EventIdx(i as u32)) {
                *a = false;
                self.live -= 1;
                // Its frontier's chunks may be shared with no survivor, and a long child list
                // would be kept for whatever event the slot holds next: both are let go (small
                // vectors stay, for the next event made here).
                let ev = &mut self.events[i];
                ev.frontier.clear();
                for n in ev.nodes.iter_mut().filter(|n| n.children.capacity() > SPARE_CHILDREN) {
                    n.children = Vec::new();
                }
            }
        }
        self.by_key.clear();
        self.free.clear();
        let mut preds = std::mem::take(&mut self.scratch_preds);
        for i in (0..self.events.len()).rev() {
            if !self.alive[i] {
                self.free.push(EventIdx(i as u32));
                continue;
            }
            let ev = &mut self.events[i];
            for n in ev.nodes.iter_mut() {
                // Cheap here (the node is being read anyway), and a prune that kept an event
                // without its history would leave it pointing into reused slots.
                assert!(n.pred.is_none_or(kept), "a pruned unfolding is closed under causality");
                n.children.retain(|c| kept(c.event));
            }
            preds.clear();
            preds.extend(ev.nodes.iter().map(|n| n.pred));
            ev.same_hash = self.by_key.insert(key_hash(ev.action, &preds), EventIdx(i as u32));
        }
        self.scratch_preds = preds;
        for v in self.roots.iter_mut() {
            v.retain(|c| kept(c.event));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::test_support::*;
    use super::super::*;
    use crate::object_table::ObjIdx;
    use shared_proto::EventKind;

    /// Random runs hash-consed into one unfolding, then pruned to random causally closed
    /// subsets, again and again, with more runs between (which reuse the slots): after each
    /// prune, every survivor is found by its key and listed once as a child of each of its
    /// predecessors, and no pruned event is found or listed.
    #[test]
    fn retain_keeps_the_index_and_child_lists_of_the_survivors() {
        let mut u = Unfolding::new(2);
        let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
        let mut pruned = 0;
        for _round in 0..12 {
            for _run in 0..15 {
                random_run(&mut u, &mut rng, 10, 3, false);
            }
            let live: Vec<EventIdx> = u.all().collect();
            let mut keep = vec![false; u.capacity()];
            let mut stack: Vec<EventIdx> = live.iter().copied().filter(|_| rng.below(3) == 0).collect();
            while let Some(x) = stack.pop() {
                if !std::mem::replace(&mut keep[x.0 as usize], true) {
                    stack.extend(u.preds(x).filter_map(|(_, p)| p));
                }
            }
            let gone: Vec<(ActionIdx, Vec<Option<EventIdx>>)> =
                live.iter().filter(|e| !keep[e.0 as usize]).map(|&e| (u.action_idx(e), u.preds(e).map(|(_, p)| p).collect())).collect();
            pruned += gone.len();
            u.retain(&keep);
            for (a, preds) in &gone {
                assert_eq!(u.find(*a, preds), None, "a pruned event is not found");
            }
            let survivors: Vec<EventIdx> = u.all().collect();
            assert_eq!(survivors, live.iter().copied().filter(|e| keep[e.0 as usize]).collect::<Vec<_>>());
            assert_eq!(u.live(), survivors.len());
            for &e in &survivors {
                let preds: Vec<Option<EventIdx>> = u.preds(e).map(|(_, p)| p).collect();
                assert_eq!(u.find(u.action_idx(e), &preds), Some(e), "survivor {e:?} indexed");
                for (o, p) in u.preds(e) {
                    assert_eq!(u.children(o, p).filter(|&c| c == e).count(), 1, "{e:?} a child once");
                    assert!(u.children(o, p).all(|c| keep[c.0 as usize]), "only survivors listed");
                }
            }
        }
        assert!(pruned > 500, "{pruned} events pruned");
    }



    #[test]
    fn retain_frees_and_reuses_slots() {
        let mut u = Unfolding::new(4);
        let a = act(&mut u, 0, &[0, 9]);
        let b = act(&mut u, 1, &[1, 9]);
        let (a1, _) = u.event(a, &[None, None], EventKind::Lock, 0);
        let (b1, _) = u.event(b, &[None, None], EventKind::Lock, 0);
        let mut keep = vec![false; u.capacity()];
        keep[a1.0 as usize] = true;
        u.retain(&keep);
        assert_eq!(u.live(), 1);
        assert_eq!(u.children(ObjIdx(9), None).collect::<Vec<_>>(), [a1]);
        let (b1again, new) = u.event(b, &[None, None], EventKind::Lock, 0);
        assert!(new && b1again == b1);
    }
}
