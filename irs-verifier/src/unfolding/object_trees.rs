//! The per-object trees of the unfolding: on each of its objects an event has one immediate
//! predecessor, and these links form a tree per object (the thread and lock trees of 000 §5.1,
//! generalised to every object). Nodes at depths divisible by `step^l` keep skip pointers to
//! ancestors `step`, …, `step^l` up (000 §5.2), which answer ancestor queries in
//! O(`step · log_step(distance)`) jumps. The child lists are what the comb searches for
//! siblings (000 §5); each entry remembers its last descent test. Queries only: the trees are
//! built by `events` and cut back by `retain`.

use super::{EventIdx, Unfolding};
use crate::object_table::ObjIdx;
use crate::thread_names::StableThread;

#[derive(Clone, Debug)]
pub(super) struct TreeNode {
    /// The object whose tree this node is in (kept here so that tree walks never leave the
    /// events they visit).
    pub(super) obj: ObjIdx,
    pub(super) pred: Option<EventIdx>,
    /// 1 for an event without predecessor on the object (the root `⊥` has depth 0).
    pub(super) depth: u32,
    /// Its skip pointers: `skips[skip_at + l]` of the event, for `l < skip_len`, is the ancestor
    /// at depth `depth - step^(l+1)`, for every `l` with `step^(l+1)` dividing `depth` and such a
    /// depth ≥ 1.
    pub(super) skip_at: u16,
    pub(super) skip_len: u16,
    /// The events that follow this one on the object (its children in the object's tree).
    pub(super) children: Vec<Child>,
}

/// An event as a child in an object's tree (see [`Unfolding::children_of_others`]).
#[derive(Clone, Debug)]
pub struct Child {
    pub event: EventIdx,
    pub thread: StableThread,
    /// Its thread's own object, its predecessor there (`None`: the thread's first event) and that
    /// predecessor's depth in the thread's tree (0 for none).
    pub own: ObjIdx,
    pub own_pred: Option<EventIdx>,
    pub own_pred_depth: u32,
    /// The thread predecessor's ancestor at some depth, found by the last descent test (see
    /// [`Child::pred_descends_from`]): that ancestor in the high half, the depth in the low half
    /// (`u64::MAX`: none yet). It is in the event's history, so it is live as long as the entry
    /// is (a prune keeps histories whole), and it stays right whatever `C` becomes.
    pub(super) memo: std::cell::Cell<u64>,
}

pub(super) const NO_MEMO: u64 = u64::MAX;

impl Child {
    /// Whether `x`, the last event in the configuration `C` on the thread's own object (at
    /// depth `x_depth` in its tree), is an ancestor-or-self of the thread predecessor. The comb
    /// asks it at every node it backtracks over, for every candidate whose predecessor is deeper
    /// than `x`: most are answered from the remembered ancestor `a` at depth `d`, without a walk.
    /// `C`'s events on the object form one chain, ending at `x`. So at `x_depth = d` the answer
    /// is `a == x`; above `d` it is yes only if `a ∈ C` (else `x`'s ancestor at `d`, in `C`, is
    /// not `a`), and then a walk from the predecessor decides; below `d`, `a ∉ C` (else `C`
    /// would reach deeper than `x`) and the walk starts from `a`, which is nearer.
    pub fn pred_descends_from(&self, u: &Unfolding, x: EventIdx, x_depth: u32, in_c: impl Fn(EventIdx) -> bool) -> bool {
        let Some(p) = self.own_pred else { return false };
        if x_depth >= self.own_pred_depth {
            return x == p;
        }
        let mut from = p;
        let m = self.memo.get();
        if m != NO_MEMO {
            let (a, d) = (EventIdx((m >> 32) as u32), m as u32);
            if x_depth == d {
                return a == x;
            }
            if x_depth < d {
                from = a;
            } else if !in_c(a) {
                return false;
            }
        }
        let up = u.ancestor_at(self.own, from, x_depth);
        self.memo.set(((up.0 as u64) << 32) | x_depth as u64);
        up == x
    }
}

impl Unfolding {
    /// `e`'s node in `o`'s tree (`e` must belong to `o`).
    pub(super) fn node(&self, e: EventIdx, o: ObjIdx) -> &TreeNode {
        self.ev(e).nodes.iter().find(|n| n.obj == o).expect("event on object")
    }

    /// `e`'s immediate predecessor on object `o` (which `e` belongs to).
    pub fn pred(&self, e: EventIdx, o: ObjIdx) -> Option<EventIdx> {
        self.ev(e).nodes.iter().find(|n| n.obj == o).and_then(|n| n.pred)
    }

    pub fn preds(&self, e: EventIdx) -> impl Iterator<Item = (ObjIdx, Option<EventIdx>)> + '_ {
        self.ev(e).nodes.iter().map(|n| (n.obj, n.pred))
    }

    /// `e`'s objects with its depth in each one's tree.
    pub fn depths(&self, e: EventIdx) -> impl Iterator<Item = (ObjIdx, u32)> + '_ {
        self.ev(e).nodes.iter().map(|n| (n.obj, n.depth))
    }

    pub(super) fn depth(&self, e: EventIdx, o: ObjIdx) -> u32 {
        self.node(e, o).depth
    }

    /// `x`'s skip pointer of level `level` in `o`'s tree (which it must have).
    pub(super) fn skip(&self, x: EventIdx, o: ObjIdx, level: usize) -> EventIdx {
        let ev = self.ev(x);
        let n = ev.nodes.iter().find(|n| n.obj == o).expect("event on object");
        debug_assert!(level < n.skip_len as usize);
        ev.skips[n.skip_at as usize + level]
    }

    /// The ancestor-or-self of `x` at depth `d` in `o`'s tree (`d` ≤ `x`'s depth, `d` ≥ 1).
    pub(super) fn ancestor_at(&self, o: ObjIdx, mut x: EventIdx, d: u32) -> EventIdx {
        loop {
            let ev = self.ev(x);
            let n = ev.nodes.iter().find(|n| n.obj == o).expect("event on object");
            if n.depth == d {
                return x;
            }
            // The longest jump that does not overshoot, else one step.
            let mut next = n.pred.expect("depth above 1 has a predecessor");
            let mut reach = self.skip_step as u64;
            for &s in &ev.skips[n.skip_at as usize..][..n.skip_len as usize] {
                if (n.depth as u64) < d as u64 + reach {
                    break;
                }
                next = s;
                reach *= self.skip_step as u64;
            }
            x = next;
        }
    }

    /// `a` is `b` or an ancestor of `b` in `o`'s tree (both on `o`).
    pub fn tree_le(&self, o: ObjIdx, a: EventIdx, b: EventIdx) -> bool {
        if a == b {
            return true;
        }
        let (da, db) = (self.depth(a, o), self.depth(b, o));
        da <= db && self.ancestor_at(o, b, da) == a
    }

    /// Events whose predecessor on `o` is `pred`.
    #[cfg(test)]
    pub fn children(&self, o: ObjIdx, pred: Option<EventIdx>) -> impl Iterator<Item = EventIdx> + '_ {
        self.child_list(o, pred).iter().map(|c| c.event)
    }

    /// Events of threads other than `thread` whose predecessor on `o` is `pred`.
    pub fn children_of_others(&self, o: ObjIdx, pred: Option<EventIdx>, thread: StableThread) -> impl Iterator<Item = &Child> + '_ {
        self.child_list(o, pred).iter().filter(move |c| c.thread != thread)
    }

    /// The entries of the events whose predecessor on `o` is `pred` (a live event), oldest first;
    /// new ones are appended, and only a prune removes any.
    pub fn child_entries(&self, o: ObjIdx, pred: Option<EventIdx>) -> &[Child] {
        self.child_list(o, pred)
    }

    pub(super) fn child_list(&self, o: ObjIdx, pred: Option<EventIdx>) -> &[Child] {
        match pred {
            None => self.roots.get(o.0 as usize).map_or(&[], |v| v.as_slice()),
            Some(p) => &self.node(p, o).children,
        }
    }

    pub(super) fn child_list_mut(&mut self, o: ObjIdx, pred: Option<EventIdx>) -> Option<&mut Vec<Child>> {
        match pred {
            None => {
                let i = o.0 as usize;
                if self.roots.len() <= i {
                    self.roots.resize_with(i + 1, Vec::new);
                }
                Some(&mut self.roots[i])
            }
            Some(p) if self.alive[p.0 as usize] => self.events[p.0 as usize].nodes.iter_mut().find(|n| n.obj == o).map(|n| &mut n.children),
            Some(_) => None,
        }
    }

    /// Depth of `e` in the tree of object `o` (which `e` belongs to); 0 for none.
    pub fn depth_on(&self, e: Option<EventIdx>, o: ObjIdx) -> u32 {
        e.map_or(0, |e| self.depth(e, o))
    }
}

#[cfg(test)]
mod tests {
    use super::super::test_support::*;
    use super::super::ActionIdx;
    use super::*;
    use crate::thread_names::StableThread;
    use shared_proto::EventKind;

    /// A long chain on one object: ancestor queries through skip pointers agree with walking.
    #[test]
    fn skip_pointers_answer_ancestor_queries() {
        for step in [1, 2, 3, 5, 16] {
            let mut u = Unfolding::new(step);
            let acts: Vec<ActionIdx> = (0..3).map(|t| act(&mut u, t, &[t, 7])).collect();
            let mut chain = Vec::new();
            let mut last: [Option<EventIdx>; 3] = [None; 3];
            let mut prev = None;
            for i in 0..60u32 {
                let t = (i * 7 % 3) as usize;
                let (e, _) = u.event(acts[t], &[last[t], prev], EventKind::Lock, 0);
                last[t] = Some(e);
                prev = Some(e);
                chain.push(e);
            }
            // Every skip pointer is the ancestor at its distance (depth i + 1 at chain[i]), at
            // the depths divisible by it.
            for (i, &e) in chain.iter().enumerate() {
                let (mut level, mut dist) = (0, step as usize);
                while step > 1 && i + 1 > dist && (i + 1) % dist == 0 {
                    assert_eq!(u.skip(e, ObjIdx(7), level), chain[i - dist], "step {step}, level {level} of event {i}");
                    (level, dist) = (level + 1, dist * step as usize);
                }
            }
            for i in 0..chain.len() {
                for j in 0..chain.len() {
                    assert_eq!(u.tree_le(ObjIdx(7), chain[i], chain[j]), i <= j, "step {step}");
                    assert_eq!(u.le(chain[i], chain[j]), i <= j);
                    assert!(!u.conflict(chain[i], chain[j]));
                }
            }
        }
    }


    /// The descent test with its remembered ancestor against the tree itself: random runs of 3
    /// threads over shared words make thread 0's tree branch; each of thread 0's entries in a
    /// word's child list is asked about random events `x` of that tree in turn (`C` being the
    /// chain up to `x`), so that every way of using the memo is taken.
    #[test]
    fn descent_test_agrees_with_the_tree() {
        let mut u = Unfolding::new(2);
        let mut rng = Rng(0x2545_f491_4f6c_dd1d);
        let mut thread0 = Vec::new();
        for _run in 0..60 {
            let made = random_run(&mut u, &mut rng, 14, 2, false);
            thread0.extend(made.into_iter().filter(|&(e, new)| new && u.thread(e) == StableThread(0)).map(|(e, _)| e));
        }
        let own = ObjIdx(0);
        let entries: Vec<&Child> = thread0
            .iter()
            .flat_map(|&e| u.preds(e).filter(|&(o, _)| o != own).map(move |(o, p)| (e, o, p)))
            .flat_map(|(e, o, p)| u.children_of_others(o, p, StableThread(99)).filter(move |c| c.event == e))
            .collect();
        assert!(thread0.len() > 100 && entries.len() == thread0.len(), "{} events, {} entries", thread0.len(), entries.len());
        let (mut yes, mut no) = (0, 0);
        for _ in 0..20_000 {
            let c = entries[rng.below(entries.len() as u64) as usize];
            let x = match c.own_pred {
                // Half the time one of the predecessor's ancestors (or a sibling's child).
                Some(p) if rng.below(2) == 0 => {
                    let a = u.ancestor_at(own, p, 1 + rng.below(u.depth(p, own) as u64) as u32);
                    u.children(own, Some(a)).nth(rng.below(2) as usize).unwrap_or(a)
                }
                _ => thread0[rng.below(thread0.len() as u64) as usize],
            };
            let expected = c.own_pred.is_some_and(|p| u.tree_le(own, x, p));
            let got = c.pred_descends_from(&u, x, u.depth(x, own), |e| u.tree_le(own, e, x));
            assert_eq!(got, expected, "does the predecessor of {:?} descend from {x:?}", c.event);
            (yes, no) = (yes + usize::from(got), no + usize::from(!got));
        }
        assert!(yes > 1000 && no > 1000, "{yes} yes, {no} no");
    }
}
