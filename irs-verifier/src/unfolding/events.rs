//! Making events of `U` (000 §3: Alg. 1 adds `ex(C)` to `U`): an event is its action and its
//! immediate predecessors, hash-consed, so that the same event found in two executions is one
//! [`EventIdx`]. A new event gets its node in each of its objects' trees with its skip pointers
//! (000 §5.2) and its frontier (000 §5.1), built from its predecessors'. It never makes an
//! event whose predecessors' histories are incompatible, and never two events with one key.

use super::object_trees::{Child, TreeNode, NO_MEMO};
use super::{ActionIdx, Event, EventIdx, Unfolding};
use super::frontier::Frontier;
use crate::fx_hash::FxBuild;
use crate::object_table::ObjIdx;
use shared_proto::EventKind;
use std::hash::BuildHasher;

/// What an event is: its action and its immediate predecessors (one per object of the action).
/// The table maps the key's hash to the first event with that hash; the others are chained
/// through the events, so that looking an event up allocates nothing.
pub(super) fn key_hash(action: ActionIdx, preds: &[Option<EventIdx>]) -> u64 {
    FxBuild::default().hash_one((action.0, preds)) & KEY_HASH_MASK
}

/// Unit tests hash keys to 8 values, so that events share hash chains.
#[cfg(not(test))]
const KEY_HASH_MASK: u64 = u64::MAX;
#[cfg(test)]
const KEY_HASH_MASK: u64 = 7;

impl Unfolding {
    pub fn find(&self, action: ActionIdx, preds: &[Option<EventIdx>]) -> Option<EventIdx> {
        self.find_hashed(key_hash(action, preds), action, preds)
    }

    /// [`find`](Self::find), given the key's hash.
    pub(super) fn find_hashed(&self, hash: u64, action: ActionIdx, preds: &[Option<EventIdx>]) -> Option<EventIdx> {
        let mut at = self.by_key.get(&hash).copied();
        while let Some(e) = at {
            let ev = self.ev(e);
            if ev.action == action && ev.nodes.iter().map(|n| n.pred).eq(preds.iter().copied()) {
                return Some(e);
            }
            at = ev.same_hash;
        }
        None
    }

    /// The event of `action` with these immediate predecessors (parallel to the action's
    /// objects), created if new (with `gap`, see [`Unfolding::gap`]). The predecessors'
    /// histories must be compatible.
    pub fn event(&mut self, action: ActionIdx, preds: &[Option<EventIdx>], kind: EventKind, gap: u32) -> (EventIdx, bool) {
        let hash = key_hash(action, preds);
        if let Some(e) = self.find_hashed(hash, action, preds) {
            return (e, false);
        }
        self.kills |= kind == EventKind::Kill;
        let mut objects = std::mem::take(&mut self.scratch_objs);
        objects.clear();
        objects.extend_from_slice(&self.actions[action.0 as usize].objects);
        let (thread, own) = (self.actions[action.0 as usize].thread, self.actions[action.0 as usize].own);
        let own_pred = objects.iter().position(|&o| o == own).and_then(|i| preds[i]);
        let own_pred_depth = self.depth_on(own_pred, own);
        debug_assert_eq!(objects.len(), preds.len());
        let idx = match self.free.pop() {
            Some(i) => i,
            None => {
                self.alive.push(false);
                self.events.push(Event {
                    action,
                    kind,
                    nodes: Vec::new(),
                    skips: Vec::new(),
                    frontier: Frontier::default(),
                    same_hash: None,
                    gap,
                    mem: None,
                });
                EventIdx(self.events.len() as u32 - 1)
            }
        };
        // Frontier: the deepest last event per object over the predecessors' histories (the
        // histories are compatible, so the last events on a shared object are comparable), then
        // the event itself on its own objects. Frontiers are sorted by object, merged linearly.
        // Built straight in the slot's own vectors (left from the event pruned there, if any;
        // a free slot is read by nobody), and a scratch one they swap with.
        let slot = &mut self.events[idx.0 as usize];
        let (mut frontier, mut nodes, mut skips) =
            (std::mem::take(&mut slot.frontier), std::mem::take(&mut slot.nodes), std::mem::take(&mut slot.skips));
        frontier.clear();
        // `top`: the predecessor (with its object) whose frontier `frontier` is, while it is
        // one's. Most often one predecessor's history holds the other's (a thread's next event
        // after its own release of the mutex, or a lock after the releasing thread's event the
        // thread has already seen: 80% of the two-predecessor events of MPAT and DISP), and then
        // the frontier is that predecessor's, without a merge. The histories are compatible, so
        // their last events on an object are comparable, and "`p` ≤ `t`" is "`t`'s history
        // reaches `p`'s depth on `p`'s object": a depth comparison, no walk up a tree.
        let covers = |t: EventIdx, o: ObjIdx, p: EventIdx| self.last_on(t, o).is_some_and(|l| l == p || self.depth(l, o) >= self.depth(p, o));
        let mut top: Option<(ObjIdx, EventIdx)> = None;
        for (n, (&o, p)) in objects.iter().zip(preds).filter_map(|(o, p)| p.map(|p| (o, p))).enumerate() {
            let other = &self.ev(p).frontier;
            if n == 0 {
                frontier.copy_from(other);
                top = Some((o, p));
                continue;
            }
            if let Some((to, t)) = top {
                if covers(t, o, p) {
                    continue;
                }
                if covers(p, to, t) {
                    frontier.copy_from(other);
                    top = Some((o, p));
                    continue;
                }
            }
            top = None;
            frontier.merge(other, |o, a, b| self.depth(EventIdx(a), o) >= self.depth(EventIdx(b), o));
        }
        for &o in objects.iter() {
            frontier.set(o, idx.0);
        }
        nodes.truncate(objects.len());
        skips.clear();
        for (i, (&o, &pred)) in objects.iter().zip(preds).enumerate() {
            let depth = pred.map_or(0, |p| self.depth(p, o)) + 1;
            let skip_at = skips.len();
            if let Some(p) = pred {
                // Level l points `step^(l+1)` up, at depths divisible by that: level 0 by walking
                // up from the predecessor, each next level by `step - 1` jumps of the level below
                // (from this node's own, then from the nodes reached, whose depths are multiples
                // of `step^l` above `step^l`, so they have one).
                let step = self.skip_step as u64;
                let mut dist = step;
                while step > 1 && (depth as u64) > dist && depth as u64 % dist == 0 {
                    let up = match skips.len() - skip_at {
                        0 => self.ancestor_at(o, p, depth - dist as u32),
                        level => (1..step).fold(skips[skips.len() - 1], |y, _| self.skip(y, o, level - 1)),
                    };
                    skips.push(up);
                    dist *= step;
                }
            }
            let (skip_at, skip_len) = (skip_at as u16, (skips.len() - skip_at) as u16);
            match nodes.get_mut(i) {
                Some(n) => {
                    n.children.clear();
                    (n.obj, n.pred, n.depth, n.skip_at, n.skip_len) = (o, pred, depth, skip_at, skip_len);
                }
                None => nodes.push(TreeNode { obj: o, pred, depth, skip_at, skip_len, children: Vec::new() }),
            }
            let child = Child { event: idx, thread, own, own_pred, own_pred_depth, memo: std::cell::Cell::new(NO_MEMO) };
            self.child_list_mut(o, pred).expect("a predecessor is a live event").push(child);
        }
        let same_hash = self.by_key.insert(hash, idx);
        let ev = &mut self.events[idx.0 as usize];
        (ev.nodes, ev.skips, ev.frontier) = (nodes, skips, frontier);
        (ev.action, ev.kind, ev.same_hash, ev.gap, ev.mem) = (action, kind, same_hash, gap, None);
        self.alive[idx.0 as usize] = true;
        self.scratch_objs = objects;
        self.live += 1;
        self.created += 1;
        (idx, true)
    }
}
