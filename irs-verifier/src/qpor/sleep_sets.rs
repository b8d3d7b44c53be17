//! The sleep set's test (Alg. 1 lines 5 and 7, 000 §3): the events the enabled operations would
//! be at `C`, looked up in `U` but never added to it, and the first of them not in `D`, as the
//! schedule's next entry (a nondet call's first value not in `D`).

use super::events_at_c::as_event;
use super::Verifier;
use crate::thread_names::RunThreads;
use crate::unfolding::EventIdx;
use shared_proto::{EventKind, ObjectRef, PendingOp, ThreadId};

impl Verifier<'_> {
    /// The event a thread about to perform `op` would be at `C`, if `U` has it. Only events of
    /// `U` can be in a sleep set, which is all the walk asks of the enabled events; so they are
    /// looked up, not added (Alg. 1 adds `en(C)` to `U`: an enabled event that conflicts with
    /// the one explored is added anyway as a conflicting extension of the thread's later event,
    /// and the others would only lengthen the object trees' sibling lists the comb searches).
    pub(super) fn pending_event(&mut self, threads: &RunThreads, op: &PendingOp) -> Option<EventIdx> {
        let ev = as_event(op);
        let (a, _, kind) = self.labeled_action(threads, op.tid, &ev);
        if self.no_event(a) {
            return None;
        }
        self.at_c(a, kind);
        self.u.find(a, &self.preds_buf)
    }

    /// The first of the enabled operations whose event at `C` is not in the sleep set, as a
    /// schedule's entry: its thread, and for a nondet call the first value whose event is not.
    pub(super) fn first_awake(&mut self, threads: &RunThreads, enabled: &[PendingOp], sleep: &[EventIdx]) -> Option<ThreadId> {
        for op in enabled {
            let choices = match op.object {
                ObjectRef::Choice { of, .. } if op.kind == EventKind::Nondet => of.max(1),
                _ => 1,
            };
            for v in 0..choices {
                let mut op = *op;
                if choices > 1 {
                    op.object = ObjectRef::Choice { value: v, of: choices };
                }
                if !self.pending_event(threads, &op).is_some_and(|x| sleep.contains(&x)) {
                    return Some(op.tid.with_choice(v));
                }
            }
        }
        None
    }
}
