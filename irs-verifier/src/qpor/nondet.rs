//! `__VERIFIER_nondet_*` in the exploration (docs/src/sv-comp.md), and the runtime's
//! own choices (which waiter a signal wakes): each value a call takes is an event of its own, a sibling of the others in its thread's tree, which the comb
//! takes as alternatives (`comb`); and the verdict's bounds, where the explored values are fewer
//! than the call's type holds. Which thread releases a barrier's generation is such a choice
//! too, between threads: see [`Verifier::release_siblings`].

use super::events_at_c::as_event;
use super::Verifier;
use crate::thread_names::RunThreads;
use crate::unfolding::EventIdx;
use shared_proto::{EventKind, ObjectRef, PendingOp, ThreadId};

impl Verifier<'_> {
    /// A nondet call's event at `C` was just made: the same call taking each other value of its
    /// domain is an event at `C` too, in conflict with it (a choice of the thread), which the
    /// comb can take as an alternative.
    pub(super) fn nondet_siblings(&mut self, e: EventIdx, of: u32, gap: u32) {
        let a = self.u.action_of(e).clone();
        for v in (0..of).filter(|&v| v != a.choice) {
            let av = self.u.intern_action(a.thread, a.own, a.site, a.kind, &a.objects, &a.elided, v);
            self.event_at_c(av, EventKind::Nondet, gap, None);
        }
        let info = a.site.and_then(|id| self.ex.hello().sites.iter().find(|(i, _)| *i == id));
        // A choice the runtime makes itself (which waiter a `pthread_cond_signal` wakes, see
        // `shared_proto::sync_object`) ranges over every possibility: no bound. Any other, or one
        // of unknown site, is the values a `__VERIFIER_nondet_*` call was given.
        if info.is_some_and(|(_, i)| i.kind == shared_proto::SiteKind::Sync) {
            return;
        }
        let name = info.map_or_else(|| "a __VERIFIER_nondet_* call".to_string(), |(_, i)| format!("{} at {}", i.target.trim_start_matches("call "), i.location()));
        self.nondet_seen.entry(name).and_modify(|n| *n = (*n).max(of)).or_insert(of);
    }
    /// A thread released a barrier's generation (object `barrier`) at `C`: each other thread
    /// enabled to release it there (`enabled`, the step's pending operations) would have been a
    /// release at `C` too, in conflict with it (on the barrier); made here, as a nondet call's
    /// other values are, since no run makes it once one thread has released (the others then
    /// depart) and no conflicting extension of a later event reaches it.
    pub(super) fn release_siblings(&mut self, threads: &RunThreads, enabled: &[PendingOp], chosen: ThreadId, barrier: ObjectRef) {
        for op in enabled.iter().filter(|op| op.tid != chosen && op.kind == EventKind::BarrierRelease) {
            if let (ObjectRef::Barrier { addr: a, .. }, ObjectRef::Barrier { addr: b, .. }) = (op.object, barrier) {
                if a != b {
                    continue;
                }
            }
            let (action, _) = self.action_for(threads, op.tid, op.site, op.kind, &[as_event(op)]);
            let gap = self.since.get(op.tid.index()).copied().unwrap_or(0);
            self.event_at_c(action, op.kind, gap, None);
        }
    }

    /// What the exploration rests on besides the input: the values nondet calls took, where the
    /// domain is smaller than the call's type (a `bool`'s two values are all of them).
    pub(super) fn bounds(&self) -> Vec<String> {
        let values = self.ex.options().nondet_values();
        let list = values.iter().map(|v| v.to_string()).collect::<Vec<_>>().join(", ");
        self.nondet_seen
            .iter()
            .filter(|(call, &of)| !(of == 2 && (call.starts_with("__VERIFIER_nondet_bool") || call.starts_with("__VERIFIER_nondet__Bool"))))
            .map(|(call, _)| {
                let ty = call.strip_prefix("__VERIFIER_nondet_").and_then(|t| t.split(' ').next()).unwrap_or("value");
                format!("{call} took only the values {{{list}}} (as its type holds them), not every {ty}")
            })
            .collect()
    }
}
