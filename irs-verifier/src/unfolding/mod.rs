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
//! event on it (in chunks shared between events, see `frontier`). This is the `tmax`
//! of §5.1 extended from threads to all objects; with it causality and conflict reduce to
//! ancestor queries in one tree (Theorem 6, generalised from locks to objects): `a ≤ b` iff `a`
//! is an ancestor-or-self of `b`'s last event on any object of `a`; `a # b` iff on some object
//! both touched, their last events are incomparable.
//!
//! The unfolding is kept in files by concept:
//!
//! - `actions`: what a thread does independent of when (the labels `h(e)` of events), interned;
//! - `events`: making an event of `U`, hash-consed by its key, with its tree nodes, skip pointers
//!   and frontier (000 §3, `ex(C)` added to `U`);
//! - `object_trees`: the per-object trees and their skip pointers (000 §5.1 thread and lock
//!   trees, §5.2 ancestor queries on tree nodes), and the child lists the comb searches;
//! - `causality`: causality, conflict and compatibility with a configuration through the
//!   frontiers (000 §5.1, Theorem 6);
//! - `frontier`: an event's last event per object of its history (the `tmax` of 000 §5.1),
//!   stored in shared chunks;
//! - `configuration`: the configuration `C` the exploration stands at, undone in stack order;
//! - `retain`: pruning `U` to a causally closed subset (Alg. 1 line 13), slots kept for reuse.
//!
//! The unfolding holds events and answers questions about them: it never decides which events
//! to add or keep (the exploration in `crate::qpor` does), and it never keeps an event without
//! its history.

mod actions;
mod causality;
mod configuration;
mod events;
mod frontier;
mod object_trees;
mod retain;
#[cfg(test)]
mod test_support;

pub use actions::{action_kind, Action};
pub use configuration::Configuration;
pub use object_trees::Child;

use crate::fx_hash::PassHashMap;
use crate::object_table::ObjIdx;
use crate::thread_names::StableThread;
use frontier::Frontier;
use object_trees::TreeNode;
use shared_proto::EventKind;

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct EventIdx(pub u32);

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct ActionIdx(pub u32);

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
    /// For an access the value model follows (`crate::update_labels`): where it is, its
    /// operand, and what it leaves for later accesses to find.
    mem: Option<Box<MemFacts>>,
}

/// What the value model (`shared_proto::value_model`) knows of an access event: a function of
/// the event (its action and history), set once when it is made.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MemFacts {
    pub place: (shared_proto::LogicalAddr, u32),
    pub operand: Option<shared_proto::value_model::Operand>,
    pub left: Option<shared_proto::value_model::LastWrite>,
}

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

    /// What the value model knows of `e` (`None` for an event it does not follow).
    pub fn mem(&self, e: EventIdx) -> Option<&MemFacts> {
        self.ev(e).mem.as_deref()
    }

    /// Set what the value model knows of `e`, a new event (see `crate::update_labels`).
    pub fn set_mem(&mut self, e: EventIdx, facts: MemFacts) {
        self.events[e.0 as usize].mem = Some(Box::new(facts));
    }

    pub fn objects(&self, e: EventIdx) -> &[ObjIdx] {
        &self.action_of(e).objects
    }

    /// The steps `e`'s thread takes after its thread predecessor and before `e` that are no
    /// events (accesses to race-free words only).
    pub fn gap(&self, e: EventIdx) -> u32 {
        self.ev(e).gap
    }

    /// Whether some event is a kill at the process's end (see `comb::sibling_objects`).
    pub fn has_kills(&self) -> bool {
        self.kills
    }

    /// Every live event.
    #[cfg(test)]
    pub fn all(&self) -> impl Iterator<Item = EventIdx> + '_ {
        self.alive.iter().enumerate().filter(|(_, &a)| a).map(|(i, _)| EventIdx(i as u32))
    }

    pub fn capacity(&self) -> usize {
        self.events.len()
    }
}
