//! What the walk does at the process's end (DESIGN §3; docs/src/process-end.md): a kill
//! cuts a thread off, and what that forecloses never happens in the run, so it would never come
//! back as a conflicting extension of a later event of the killed thread. The walk adds it to
//! `U` itself: at the kill (`cut_off`) and at the run's final configuration (`cut_at_end`). A
//! killed thread's steps that are no events (accesses to race-free words) make their words racy:
//! the end is unordered with them, and only an event can be moved past a kill.

use super::events_at_c::as_event;
use super::run_steps::RunSteps;
use super::{site_text, Verifier, VerifyError};
use crate::cex;
use crate::object_table::{ObjClass, ObjIdx};
use crate::thread_names::RunThreads;
use crate::unfolding::{ActionIdx, EventIdx};
use crate::update_labels;
use shared_proto::{Event, EventKind, ObjectRef, PendingOp, ThreadId};

impl Verifier<'_> {
    /// A kill at the process's end at step `s` (DESIGN §3) cuts `victim` off: what it forecloses
    /// never happens in this run, so it would never come back as a conflicting extension of a
    /// later event. The victim's next operation and the enabled joins of it are added to `U` here
    /// as the events they would be at `C` (where enabled), with their moves up their objects'
    /// chains, as the operations threads are left blocked on at a deadlock are. A victim whose next
    /// step is no event (an access to race-free words) could be cut off before or after it, and
    /// only an event can be moved before a kill: the process's end is unordered with that access,
    /// which makes its words racy (the exploration starts over with them as objects).
    pub(super) fn cut_off(&mut self, threads: &RunThreads, run: &dyn RunSteps, s: usize, victim: ThreadId) -> Result<(), VerifyError> {
        // The victim's steps since its last event are no events: the end could have come before
        // any of them, which only an event can show (a run goes on to a thread's next event
        // before it switches). Their words are unordered with the end: racy.
        let mut since_last: Vec<(ObjIdx, bool)> = Vec::new();
        for n in self.path.iter().rev().filter(|n| n.tid.index() == victim.index()) {
            if n.event.is_some() {
                break;
            }
            let w = super::word_checks::writes(self.u.actions(n.action).kind);
            since_last.extend(self.u.actions(n.action).elided.iter().map(|&x| (x, w)));
        }
        for (x, w) in since_last {
            self.words.racy(self.objects.key(x), w, || {
                format!("an access to this word by T{} comes after that thread's last event and before a kill of it at step {s}: the process's end is unordered with it", victim.0)
            });
        }
        let enabled = run.enabled(s)?;
        let mut ops: Vec<(PendingOp, bool)> = Vec::new();
        if let Some(op) = run.steps()[s].cut {
            ops.push((op, enabled.iter().any(|e| e.tid == op.tid)));
        }
        ops.extend(enabled.iter().filter(|o| o.kind == EventKind::Join && o.object == ObjectRef::Thread(victim)).map(|o| (*o, true)));
        for (op, is_enabled) in ops {
            let ev = as_event(&op);
            let (a, own, op_kind) = self.labeled_action(threads, op.tid, &ev);
            let ev = Event { kind: op_kind, ..ev };
            let src = update_labels::source_of(&ev);
            if self.no_event(a) {
                for i in 0..self.u.actions(a).elided.len() {
                    let x = self.u.actions(a).elided[i];
                    let at = site_text(self.ex, op.site);
                    let kind = op.kind.name();
                    self.words.racy(self.objects.key(x), super::word_checks::writes(op.kind), || {
                        format!("the {kind}{at} by T{} is the next step of a thread that the process's end cuts off at step {s}: the end is unordered with it", op.tid.0)
                    });
                }
                continue;
            }
            let gap = self.since.get(op.tid.0 as usize).copied().unwrap_or(0);
            let kind = self.at_c(a, op_kind);
            let preds = self.preds_buf.clone();
            if is_enabled {
                update_labels::make(&mut self.u, &self.objects, a, &preds, kind, gap, src);
            }
            self.extensions.of_blocked(&mut self.u, &self.objects, a, op_kind, &preds, own, gap, src);
            self.blocked_alternate(threads, &ev, a, own, self.c.last(own), gap);
        }
        Ok(())
    }

    /// At the end of a run, every thread a kill cut off: what it was about to do, as the event
    /// it would be at the final `C` (its own predecessor the kill's, the others `C`'s last
    /// events), with its moves up its objects' chains. Events that other threads performed after
    /// the kill change where the killed thread's next event would be (it reads what they wrote),
    /// and no later event of the killed thread brings those positions back as conflicting
    /// extensions: they are `ex(C)` of the configurations after the kill (found by the
    /// differential campaign).
    pub(super) fn cut_at_end(&mut self, threads: &RunThreads) {
        let cuts: Vec<(EventIdx, PendingOp)> = self.path.iter().filter_map(|n| Some((n.event?, n.cut?))).collect();
        for (kill, mut op) in cuts {
            // A thread killed waiting at a barrier would release the generation there, or depart
            // once another thread has released it after the kill: which, `C` says.
            if matches!(op.kind, EventKind::BarrierRelease | EventKind::BarrierDepart) {
                op.kind = EventKind::BarrierDepart;
                let (a, _) = self.action_for(threads, op.tid, op.site, op.kind, &[as_event(&op)]);
                self.at_c(a, op.kind);
                let objs: Vec<ObjIdx> = self.u.actions(a).objects.to_vec();
                if !cex::barrier::enabled(&self.u, &self.objects, &objs, &self.preds_buf, op.kind, self.u.actions(a).thread) {
                    op.kind = EventKind::BarrierRelease;
                }
            }
            let ev = as_event(&op);
            let (a, own, op_kind) = self.labeled_action(threads, op.tid, &ev);
            let ev = Event { kind: op_kind, ..ev };
            let src = update_labels::source_of(&ev);
            if self.no_event(a) {
                continue;
            }
            let own_pred = self.u.pred(kill, own);
            let kind = self.at_c(a, op_kind);
            let objs: Vec<ObjIdx> = self.u.actions(a).objects.to_vec();
            let mut preds = self.preds_buf.clone();
            for (i, &o) in objs.iter().enumerate() {
                if o == own {
                    preds[i] = own_pred;
                }
            }
            let gap = self.since.get(op.tid.index()).copied().unwrap_or(0);
            let free = match kind {
                EventKind::Lock => objs.iter().all(|&o| self.objects.class(o) != ObjClass::Mutex || cex::mutex_free_after(&self.u, o, self.c.last(o))),
                EventKind::SemWait => cex::semaphore::placed(kind, cex::semaphore::count_after(&self.u, &self.objects, &objs, &self.preds_buf)).is_some(),
                k if k.on_rwlock() => cex::rwlock::placed(kind, cex::rwlock::holders_after(&self.u, &self.objects, &objs, &self.preds_buf)).is_some(),
                k if k.on_barrier() => cex::barrier::enabled(&self.u, &self.objects, &objs, &self.preds_buf, kind, self.u.actions(a).thread),
                // A thread waits for good to join a thread the end killed, or to end the process
                // another thread has ended.
                EventKind::Join | EventKind::End => false,
                _ => true,
            };
            if free {
                update_labels::make(&mut self.u, &self.objects, a, &preds, kind, gap, src);
            }
            self.extensions.of_blocked(&mut self.u, &self.objects, a, op_kind, &preds, own, gap, src);
            self.blocked_alternate(threads, &ev, a, own, own_pred, gap);
        }
    }

    /// For an update a thread is cut off at (`e`, labelled at `C`), the other version's moves up
    /// its objects' chains from `C` (`update_labels`): what the update would be placed earlier.
    /// `own_pred`: its thread predecessor.
    fn blocked_alternate(&mut self, threads: &RunThreads, e: &Event, action: ActionIdx, own: ObjIdx, own_pred: Option<EventIdx>, gap: u32) {
        let Some((alt, alt_kind)) = self.alternate(threads, e.tid, e, action) else { return };
        let preds: Vec<Option<EventIdx>> = self.u.actions(alt).objects.iter().map(|&o| if o == own { own_pred } else { self.c.last(o) }).collect();
        self.extensions.of_blocked(&mut self.u, &self.objects, alt, alt_kind, &preds, own, gap, update_labels::source_of(e));
    }
}
