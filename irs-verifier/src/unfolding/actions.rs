//! Actions: what a thread does independent of when (the label `h(e)` of an event in 000 §2–3):
//! its thread, instruction, kind and objects, interned so that the same action found twice is
//! one [`ActionIdx`]. Interning only: an action never changes once made, and never refers to
//! an event.

use super::{ActionIdx, EventIdx, Unfolding};
use crate::fx_hash::FxBuild;
use crate::object_table::ObjIdx;
use crate::thread_names::StableThread;
use shared_proto::{EventKind, SiteId};
use std::hash::BuildHasher;

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
        EventKind::SemTryFail => EventKind::SemTryWait,
        EventKind::RwTryReadFail => EventKind::RwTryRead,
        EventKind::RwTryWriteFail => EventKind::RwTryWrite,
        k => k,
    }
}

impl Unfolding {
    #[cfg(test)]
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
}
