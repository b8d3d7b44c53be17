//! The part of the program's unfolding (its prime event structure, QPOR paper §2–3) discovered
//! so far: the set `U` of Alg. 1. Events are hash-consed by (action, immediate predecessors), so
//! the same event found in two executions is one [`EventIdx`].
//!
//! Every event belongs to one or more objects ([`ObjIdx`]: its own thread, memory words,
//! mutexes, threads it creates or joins), and on each it has one immediate predecessor, the
//! previous event on that object in its history. Per object these predecessor links form a
//! tree (the thread trees and lock trees of §5.1, generalised to every object), and a node at a
//! depth divisible by `step^l` keeps skip pointers to its ancestors at distances `step`, …,
//! `step^l` (§5.2), so an ancestor query takes O(`step · log_step(distance)`) jumps. (Pointers at
//! *every* node, binary lifting, make a query a few jumps shorter, but cost `log_step(depth)`
//! pointers per node, each found by reading an ancestor far up the tree when the event is made;
//! most events are pruned without ever being asked, and those reads missed the cache: with
//! `step = 4` and the paper's placement the verifier runs 4–6% fewer instructions and misses its
//! last-level cache 7–29% less often than with pointers at every node and `step = 2`.)
//!
//! Each event also stores its *frontier*: for every object touched in its history, the last
//! event on it (in chunks shared between events, see [`crate::frontier`]). This is the `tmax`
//! of §5.1 extended from threads to all objects; with it causality and conflict reduce to
//! ancestor queries in one tree (Theorem 6, generalised from locks to objects): `a ≤ b` iff `a`
//! is an ancestor-or-self of `b`'s last event on any object of `a`; `a # b` iff on some object
//! both touched, their last events are incomparable.

use crate::frontier::Frontier;
use crate::fx_hash::{FxBuild, PassHashMap};
use crate::object_table::ObjIdx;
use crate::thread_names::StableThread;
use shared_proto::{EventKind, SiteId};
use std::hash::BuildHasher;

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct EventIdx(pub u32);

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct ActionIdx(pub u32);

/// What a thread does, independent of when: the thread, the instruction, the kind (a trylock is
/// one action whether it succeeds or not) and the objects, its own thread's object included.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Action {
    pub thread: StableThread,
    /// The thread's own object (its life: program order, creation, joins), one of `objects`.
    pub own: ObjIdx,
    pub site: Option<SiteId>,
    pub kind: EventKind,
    /// Sorted, without duplicates.
    pub objects: Box<[ObjIdx]>,
    /// Memory words it accesses that are not among its objects because they are race-free so
    /// far (see `race_free_words`): part of what the action is, so that a run accessing another
    /// word is another action, but no tree of theirs is kept. Sorted, without duplicates.
    pub elided: Box<[ObjIdx]>,
    /// For a call of `__VERIFIER_nondet_*`, the value it takes (an index into the explored
    /// domain): each value is another action, and its events conflict (0 for other actions).
    pub choice: u32,
}

/// The action's kind with a trylock's result dropped.
pub fn action_kind(kind: EventKind) -> EventKind {
    match kind {
        EventKind::TryLockFail => EventKind::TryLock,
        k => k,
    }
}

#[derive(Clone, Debug)]
struct TreeNode {
    /// The object whose tree this node is in (kept here so that tree walks never leave the
    /// events they visit).
    obj: ObjIdx,
    pred: Option<EventIdx>,
    /// 1 for an event without predecessor on the object (the root `⊥` has depth 0).
    depth: u32,
    /// Its skip pointers: `skips[skip_at + l]` of the event, for `l < skip_len`, is the ancestor
    /// at depth `depth - step^(l+1)`, for every `l` with `step^(l+1)` dividing `depth` and such a
    /// depth ≥ 1.
    skip_at: u16,
    skip_len: u16,
    /// The events that follow this one on the object (its children in the object's tree).
    children: Vec<Child>,
}

/// A slot of the event table. A pruned event's slot keeps its vectors (their capacity) for the
/// next event made in it: exploration makes and prunes events at a steady rate, and allocating
/// and freeing their parts was a fifth of the verifier's own time.
struct Event {
    action: ActionIdx,
    /// The kind as it happens with this history (trylock or trylock-fail).
    kind: EventKind,
    /// Parallel to the action's objects.
    nodes: Vec<TreeNode>,
    /// The skip pointers of all its nodes (one vector per event, not per node).
    skips: Vec<EventIdx>,
    /// The last event on each object in `[e]` (chunks shared with other events').
    frontier: Frontier,
    /// The next event whose key (action, predecessors) has the same hash.
    same_hash: Option<EventIdx>,
    /// The steps its thread takes between its thread predecessor and it that are no events
    /// (accesses to race-free words, see `race_free_words`): a function of the event, as the
    /// thread's steps after its predecessor are a function of that predecessor's history.
    gap: u32,
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
    memo: std::cell::Cell<u64>,
}

const NO_MEMO: u64 = u64::MAX;

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

/// What an event is: its action and its immediate predecessors (one per object of the action).
/// The table maps the key's hash to the first event with that hash; the others are chained
/// through the events, so that looking an event up allocates nothing.
fn key_hash(action: ActionIdx, preds: &[Option<EventIdx>]) -> u64 {
    FxBuild::default().hash_one((action.0, preds)) & KEY_HASH_MASK
}

/// Unit tests hash keys to 8 values, so that events share hash chains.
#[cfg(not(test))]
const KEY_HASH_MASK: u64 = u64::MAX;
#[cfg(test)]
const KEY_HASH_MASK: u64 = 7;

/// A pruned event's slot keeps child lists up to this long for the next event made in it.
const SPARE_CHILDREN: usize = 8;

pub struct Unfolding {
    events: Vec<Event>,
    /// Per slot of `events`: whether it holds a live event. Dense, so that a prune's sweep does
    /// not read the slots of events pruned before (half of them, and half of the sweep's cache
    /// misses on DISP(5,4) when the flag was in the event).
    alive: Vec<bool>,
    free: Vec<EventIdx>,
    by_key: PassHashMap<EventIdx>,
    actions: Vec<Action>,
    /// Actions by the hash of their fields, chained through `action_same_hash` like events.
    action_index: PassHashMap<ActionIdx>,
    action_same_hash: Vec<Option<ActionIdx>>,
    /// Per object, the events that have no predecessor on it (the children of the root); the
    /// children of an event are in its tree node. Each entry holds what a search for events
    /// compatible with a configuration looks at first, so that most are rejected without
    /// touching the events themselves.
    roots: Vec<Vec<Child>>,
    skip_step: u32,
    /// Scratch buffers of `event` (reused: it runs for every event found).
    scratch_objs: Vec<ObjIdx>,
    scratch_preds: Vec<Option<EventIdx>>,
    live: usize,
    created: u64,
    /// Some event is a kill at the process's end: threads' trees then hold events of other
    /// threads (the kills) beside their own, which the comb must look at.
    kills: bool,
}

impl Unfolding {
    pub fn new(skip_step: u32) -> Unfolding {
        Unfolding {
            events: Vec::new(),
            alive: Vec::new(),
            free: Vec::new(),
            by_key: PassHashMap::default(),
            actions: Vec::new(),
            action_index: PassHashMap::default(),
            action_same_hash: Vec::new(),
            roots: Vec::new(),
            skip_step: skip_step.max(1),

            scratch_objs: Vec::new(),
            scratch_preds: Vec::new(),
            live: 0,
            created: 0,
            kills: false,
        }
    }

    pub fn action(&mut self, a: Action) -> ActionIdx {
        self.intern_action(a.thread, a.own, a.site, a.kind, &a.objects, &a.elided, a.choice)
    }

    /// The action with these fields (`objects` and `elided` sorted, without duplicates),
    /// interned: looking up one that exists allocates nothing.
    #[allow(clippy::too_many_arguments)]
    pub fn intern_action(&mut self, thread: StableThread, own: ObjIdx, site: Option<SiteId>, kind: EventKind, objects: &[ObjIdx], elided: &[ObjIdx], choice: u32) -> ActionIdx {
        let h = FxBuild::default().hash_one((thread, own, site, kind, objects, elided, choice));
        let mut at = self.action_index.get(&h).copied();
        while let Some(i) = at {
            let a = &self.actions[i.0 as usize];
            if a.thread == thread && a.own == own && a.site == site && a.kind == kind && *a.objects == *objects && *a.elided == *elided && a.choice == choice {
                return i;
            }
            at = self.action_same_hash[i.0 as usize];
        }
        let i = ActionIdx(self.actions.len() as u32);
        self.actions.push(Action { thread, own, site, kind, objects: objects.into(), elided: elided.into(), choice });
        self.action_same_hash.push(self.action_index.insert(h, i));
        i
    }

    pub fn action_of(&self, e: EventIdx) -> &Action {
        &self.actions[self.ev(e).action.0 as usize]
    }

    pub fn action_idx(&self, e: EventIdx) -> ActionIdx {
        self.ev(e).action
    }

    pub fn actions(&self, a: ActionIdx) -> &Action {
        &self.actions[a.0 as usize]
    }

    fn ev(&self, e: EventIdx) -> &Event {
        assert!(self.alive[e.0 as usize], "a live event");
        &self.events[e.0 as usize]
    }

    /// Events in `U` now, and ever created.
    pub fn live(&self) -> usize {
        self.live
    }

    pub fn created(&self) -> u64 {
        self.created
    }

    pub fn thread(&self, e: EventIdx) -> StableThread {
        self.action_of(e).thread
    }

    pub fn event_kind(&self, e: EventIdx) -> EventKind {
        self.ev(e).kind
    }

    pub fn objects(&self, e: EventIdx) -> &[ObjIdx] {
        &self.action_of(e).objects
    }

    /// The steps `e`'s thread takes after its thread predecessor and before `e` that are no
    /// events (accesses to race-free words only).
    pub fn gap(&self, e: EventIdx) -> u32 {
        self.ev(e).gap
    }

    /// The race-free words `e` accesses (not among its objects).
    pub fn elided(&self, e: EventIdx) -> &[ObjIdx] {
        &self.action_of(e).elided
    }

    /// `e`'s node in `o`'s tree (`e` must belong to `o`).
    fn node(&self, e: EventIdx, o: ObjIdx) -> &TreeNode {
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

    fn depth(&self, e: EventIdx, o: ObjIdx) -> u32 {
        self.node(e, o).depth
    }

    /// The last event on `o` in `[e]`.
    pub fn last_on(&self, e: EventIdx, o: ObjIdx) -> Option<EventIdx> {
        self.ev(e).frontier.get(o).map(EventIdx)
    }

    /// `(object, last event on it in [e])` for every object `[e]` touches, by object.
    pub fn frontier(&self, e: EventIdx) -> impl Iterator<Item = (ObjIdx, EventIdx)> + '_ {
        self.ev(e).frontier.iter().map(|(o, x)| (o, EventIdx(x)))
    }

    /// `x`'s skip pointer of level `level` in `o`'s tree (which it must have).
    fn skip(&self, x: EventIdx, o: ObjIdx, level: usize) -> EventIdx {
        let ev = self.ev(x);
        let n = ev.nodes.iter().find(|n| n.obj == o).expect("event on object");
        debug_assert!(level < n.skip_len as usize);
        ev.skips[n.skip_at as usize + level]
    }

    /// The ancestor-or-self of `x` at depth `d` in `o`'s tree (`d` ≤ `x`'s depth, `d` ≥ 1).
    fn ancestor_at(&self, o: ObjIdx, mut x: EventIdx, d: u32) -> EventIdx {
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

    fn comparable(&self, o: ObjIdx, a: EventIdx, b: EventIdx) -> bool {
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

    /// Events whose predecessor on `o` is `pred`.
    pub fn children(&self, o: ObjIdx, pred: Option<EventIdx>) -> impl Iterator<Item = EventIdx> + '_ {
        self.child_list(o, pred).iter().map(|c| c.event)
    }

    /// Events of threads other than `thread` whose predecessor on `o` is `pred`.
    /// Whether some event is a kill at the process's end (see `comb::sibling_objects`).
    pub fn has_kills(&self) -> bool {
        self.kills
    }

    pub fn children_of_others(&self, o: ObjIdx, pred: Option<EventIdx>, thread: StableThread) -> impl Iterator<Item = &Child> + '_ {
        self.child_list(o, pred).iter().filter(move |c| c.thread != thread)
    }

    /// The entries of the events whose predecessor on `o` is `pred` (a live event), oldest first;
    /// new ones are appended, and only a prune removes any.
    pub fn child_entries(&self, o: ObjIdx, pred: Option<EventIdx>) -> &[Child] {
        self.child_list(o, pred)
    }

    fn child_list(&self, o: ObjIdx, pred: Option<EventIdx>) -> &[Child] {
        match pred {
            None => self.roots.get(o.0 as usize).map_or(&[], |v| v.as_slice()),
            Some(p) => &self.node(p, o).children,
        }
    }

    fn child_list_mut(&mut self, o: ObjIdx, pred: Option<EventIdx>) -> Option<&mut Vec<Child>> {
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

    pub fn find(&self, action: ActionIdx, preds: &[Option<EventIdx>]) -> Option<EventIdx> {
        self.find_hashed(key_hash(action, preds), action, preds)
    }

    /// [`find`](Self::find), given the key's hash.
    fn find_hashed(&self, hash: u64, action: ActionIdx, preds: &[Option<EventIdx>]) -> Option<EventIdx> {
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
        (ev.action, ev.kind, ev.same_hash, ev.gap) = (action, kind, same_hash, gap);
        self.alive[idx.0 as usize] = true;
        self.scratch_objs = objects;
        self.live += 1;
        self.created += 1;
        (idx, true)
    }

    /// Every live event.
    pub fn all(&self) -> impl Iterator<Item = EventIdx> + '_ {
        self.alive.iter().enumerate().filter(|(_, &a)| a).map(|(i, _)| EventIdx(i as u32))
    }

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

    pub fn capacity(&self) -> usize {
        self.events.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn act(u: &mut Unfolding, t: u32, objs: &[u32]) -> ActionIdx {
        let mut objects: Vec<ObjIdx> = objs.iter().map(|&o| ObjIdx(o)).collect();
        objects.sort();
        u.action(Action { thread: StableThread(t), own: ObjIdx(t), site: None, kind: EventKind::Lock, objects: objects.into(), elided: Box::new([]), choice: 0 })
    }

    /// A xorshift generator: the tests' runs are random, and the same every time.
    struct Rng(u64);

    impl Rng {
        fn below(&mut self, n: u64) -> u64 {
            self.0 ^= self.0 << 13;
            self.0 ^= self.0 >> 7;
            self.0 ^= self.0 << 17;
            self.0 % n
        }
    }

    /// One random run of `steps` events hash-consed into `u`: each by one of 3 threads (objects
    /// 0–2) on its own object and one of `words` shared words (objects 10, 11, …), with
    /// `two_words` a second word one time in three. The events, each with whether it was new.
    fn random_run(u: &mut Unfolding, rng: &mut Rng, steps: usize, words: u64, two_words: bool) -> Vec<(EventIdx, bool)> {
        random_run_spread(u, rng, steps, words, two_words, 1)
    }

    /// [`random_run`] with the words `stride` objects apart (so that they fall in different
    /// chunks of the frontiers).
    fn random_run_spread(u: &mut Unfolding, rng: &mut Rng, steps: usize, words: u64, two_words: bool, stride: u64) -> Vec<(EventIdx, bool)> {
        let mut last: std::collections::HashMap<u32, EventIdx> = Default::default();
        let mut made = Vec::new();
        for _ in 0..steps {
            let t = rng.below(3) as u32;
            let mut objs = vec![t, 10 + (rng.below(words) * stride) as u32];
            if two_words && rng.below(3) == 0 {
                objs.push(10 + (rng.below(words) * stride) as u32);
            }
            objs.sort();
            objs.dedup();
            let a = act(u, t, &objs);
            let preds: Vec<Option<EventIdx>> = u.actions(a).objects.iter().map(|o| last.get(&o.0).copied()).collect();
            let (e, new) = u.event(a, &preds, EventKind::Lock, 0);
            assert_eq!(u.find(a, &preds), Some(e));
            for o in &objs {
                last.insert(*o, e);
            }
            made.push((e, new));
        }
        made
    }

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
