//! The walk over one run (Alg. 1 lines 3–10, 000 §3): each step of the run is a recursive call
//! along one branch: its event at `C` joins the path and `C`, its conflicting extensions join
//! `U` (`crate::cex`, 000 §5.3), the sleep set loses the events it conflicts with; a run that
//! leaves the alternative it was to follow is an error, and one whose next event is asleep ends
//! the walk (SSB or a redirection). At the run's end the operations threads are left blocked
//! on add their extensions too. The walk never backtracks (`alternatives`).

use super::events_at_c::as_event;
use super::run_steps::RunSteps;
use super::sibling_marks::SiblingMarks;
use super::{divergence, Verifier, VerifyError};
use crate::thread_names::RunThreads;
use crate::update_labels;
use crate::unfolding::{ActionIdx, EventIdx};
use shared_proto::{Event, EventKind, ObjectRef, PendingOp, ThreadId};

/// A node of the path: one step of the current branch, a call `Explore(C, D, A)` of Alg. 1 when
/// the step is an event, with its sleep set `D` and what backtracking over it must undo.
pub(super) struct Node {
    /// `None` for a step that is no event: an access to race-free words only (see
    /// `race_free_words`). Such a node is no call of Alg. 1: no alternative, an empty `sleep`.
    pub(super) event: Option<EventIdx>,
    pub(super) tid: ThreadId,
    /// The step's action (for a step that is no event, what it accessed).
    pub(super) action: ActionIdx,
    /// For a kill: what the thread it cuts off was about to do (see `Verifier::cut_at_end`).
    pub(super) cut: Option<PendingOp>,
    /// The length of `Verifier::access_undo` before the node's accesses were recorded, and the
    /// thread's count of steps since its last event before the node (see `Verifier::since`).
    pub(super) access_mark: usize,
    pub(super) since_before: u32,
    pub(super) sleep: Vec<EventIdx>,
    /// `stats.runs` when the node was entered: the runs since explored its subtree.
    pub(super) runs_at: u64,
    /// What the prunes since the node was entered found at it.
    pub(super) marks: Option<SiblingMarks>,
}

/// Where a walk over one run stands (see [`Verifier::walk_more`]): it goes on as the run
/// publishes its steps.
pub(super) struct Walk {
    /// The next step to walk.
    pub(super) s: usize,
    pub(super) sleep: Vec<EventIdx>,
    /// The alternative's events the run is to perform first (in any order).
    pub(super) follow: Vec<EventIdx>,
    pub(super) threads: RunThreads,
    /// How the walk ended, once it has.
    pub(super) leaf: Option<Leaf>,
}

impl Walk {
    pub(super) fn at(s: usize, sleep: Vec<EventIdx>, follow: Vec<EventIdx>) -> Walk {
        Walk { s, sleep, follow, threads: RunThreads::default(), leaf: None }
    }
}

/// How a walk over a run ends: a leaf of the exploration, or the run to make instead.
pub(super) enum Leaf {
    Maximal,
    Blocked,
    /// Run again with this schedule and walk on from node `from` with sleep set `sleep`.
    Redirect { schedule: Vec<ThreadId>, from: usize, sleep: Vec<EventIdx> },
    /// The schedule to run is longer than a run may be (past the event limit: a program that
    /// spins): an execution that does not end, recorded as such, not run.
    TooLong { schedule: Vec<ThreadId> },
}

impl Verifier<'_> {
    /// Walk a run on from step `w.s` (the path holds nodes `0..w.s`, `C` their events): the
    /// recursive calls of Alg. 1 along it. `steps`, `events` and `threads` are the run's so far;
    /// `ended`: the run has ended. A step is walked once its events are all known: once the next
    /// step is there, or the run has ended.
    pub(super) fn walk_more(&mut self, w: &mut Walk, run: &dyn RunSteps, ended: bool) -> Result<(), VerifyError> {
        let mut events = std::mem::take(&mut self.events_buf);
        let walked = self.walk_steps(w, run, ended, &mut events);
        self.events_buf = events;
        walked?;
        // A reader found late is noted and the run walked to its end (its other late readers
        // are noted too), then the exploration starts over (see `word_readers`).
        match (&w.leaf, self.readers.restart_needed()) {
            (Some(_), Some(why)) => Err(VerifyError::Restart(why.to_string())),
            _ => Ok(()),
        }
    }

    /// [`walk_more`](Self::walk_more), with a buffer for each step's events.
    fn walk_steps(&mut self, w: &mut Walk, run: &dyn RunSteps, ended: bool, done: &mut Vec<Event>) -> Result<(), VerifyError> {
        if w.leaf.is_some() {
            return Ok(());
        }
        debug_assert_eq!(self.path.len(), w.s);
        let (steps, n_events) = (run.steps(), run.event_count());
        w.threads.update(&mut self.names, run.threads());
        while w.s < steps.len() && (ended || w.s + 1 < steps.len()) {
            let s = w.s;
            let step = &steps[s];
            let first = step.first_event as usize;
            let end = steps.get(s + 1).map_or(n_events, |n| n.first_event as usize).min(n_events);
            // A thread that crashed performing its operation left no event: the operation, as
            // it was pending, is its last event (it halts there).
            done.clear();
            if first < end {
                run.events(first..end, done)?;
            } else {
                let Some(op) = run.enabled(s)?.iter().find(|op| op.tid == step.chosen).copied() else {
                    return Err(VerifyError::Internal(format!("step {s} chose a thread that was not enabled")));
                };
                done.push(as_event(&op));
            }
            let done = &done[..];
            if !self.cond_waits && done.iter().any(|e| matches!(e.object, ObjectRef::Mutex { addr, .. } if shared_proto::sync_object::is_condition_gate(addr))) {
                self.cond_waits = true;
            }
            // One event: labelled as the value model says at `C` (an update that leaves memory as
            // it was is a read); a memcpy's two halves are as they are.
            let (action, own, kind) = match done {
                [e] => self.labeled_action(&w.threads, step.chosen, e),
                _ => {
                    let (a, own) = self.action_for(&w.threads, step.chosen, done[0].site, done[0].kind, done);
                    (a, own, done[0].kind)
                }
            };
            if kind == EventKind::Access(shared_proto::AccessKind::UnchangedUpdate) && done[0].value.is_some_and(|v| v.changed) {
                return Err(VerifyError::Nondeterministic(format!(
                    "at step {s}, {} changed memory where the value model says it leaves it as it was (the value it found was written where irs does not see it)",
                    divergence::describe_event(self.ex.hello(), &done[0])
                )));
            }
            let block_words = if done[0].kind == EventKind::Atomic { std::mem::take(&mut self.block_words) } else { Vec::new() };
            if let (EventKind::Kill, ObjectRef::Thread(victim)) = (done[0].kind, done[0].object) {
                self.cut_off(&w.threads, run, s, victim)?;
            }
            let tid = step.chosen.0 as usize;
            if self.since.len() <= tid {
                self.since.resize(tid + 1, 0);
            }
            let (access_mark, since_before) = (self.access_undo.len(), self.since[tid]);
            // An access to race-free words only is no event, and no call of Alg. 1 (nothing can
            // be reordered with it, so it has no alternative and changes no sleep set).
            let event = match self.no_event(action) {
                true => None,
                false => {
                    let src = match done {
                        [e] => update_labels::source_of(e),
                        _ => None,
                    };
                    let (e, new) = self.event_at_c(action, kind, since_before, src);
                    if !new && self.u.gap(e) != since_before {
                        return Err(VerifyError::Nondeterministic(format!(
                            "at step {s}, T{} took {since_before} unsynchronised steps before an event where an earlier run took {}",
                            step.chosen.0,
                            self.u.gap(e)
                        )));
                    }
                    Some(e)
                }
            };
            if let Some(e) = event.filter(|_| !self.watched.is_empty()) {
                self.check_watched(action, e, own, s, step.chosen);
            }
            if let (Some(e), EventKind::Nondet, ObjectRef::Choice { of, .. }) = (event, done[0].kind, done[0].object) {
                self.nondet_siblings(e, of, since_before);
            }
            if let (Some(_), EventKind::BarrierRelease) = (event, done[0].kind) {
                self.release_siblings(&w.threads, &run.enabled(s)?, step.chosen, done[0].object);
            }
            if !self.u.actions(action).elided.is_empty() || !block_words.is_empty() {
                // The access's history, and the depth of its thread's event that follows it.
                let (q, after) = match event {
                    Some(e) => (Some(e), self.u.depth_on(Some(e), own)),
                    None => (self.c.last(own), self.u.depth_on(self.c.last(own), own) + 1),
                };
                self.record_accesses(action, &block_words, own, q, after, s, step.chosen);
            }
            self.block_words = block_words;
            if let Some(why) = self.words.restart_needed() {
                return Err(VerifyError::Restart(why.to_string()));
            }
            let Some(e) = event else {
                self.path.push(Node { event: None, tid: step.chosen, action, cut: None, access_mark, since_before, sleep: Vec::new(), runs_at: self.stats.runs, marks: None });
                self.since[tid] += 1;
                w.s += 1;
                continue;
            };
            // Line 5 of Alg. 1: en(C) ⊆ D (impossible while D has fewer events than en(C), and
            // most of the time D is empty: then no enabled event needs to be looked up).
            if run.enabled_len(s) <= w.sleep.len() && self.first_awake(&w.threads, &run.enabled(s)?, &w.sleep).is_none() {
                w.leaf = Some(Leaf::Blocked);
                return Ok(());
            }
            if !w.follow.is_empty() {
                match w.follow.iter().position(|&x| x == e) {
                    Some(i) => {
                        w.follow.remove(i);
                    }
                    // A memcpy between two shared objects is one operation whose pending op
                    // showed only its first half: the prediction can miss the second.
                    None if end - first > 1 => {
                        return Err(VerifyError::Unsupported(format!(
                            "step {s} copies between two shared objects in one operation (a memcpy or struct assignment); irs cannot reorder around it yet"
                        )))
                    }
                    None => {
                        let me = self.u.thread(e);
                        let predicted = w.follow.iter().find(|&&f| self.u.thread(f) == me).map(|&f| {
                            let a = self.u.action_of(f);
                            let keys: Vec<_> = a.objects.iter().chain(a.elided.iter()).map(|&o| self.objects.key(o)).collect();
                            divergence::describe_predicted(self.ex.hello(), a.kind, a.site, &keys)
                        });
                        return Err(VerifyError::Nondeterministic(format!(
                            "at step {s}, this run did {} where an earlier run predicted {}",
                            divergence::describe_event(self.ex.hello(), &done[0]),
                            predicted.map_or_else(|| "another event".to_string(), |p| format!("T{} {p}", step.chosen.0))
                        )))
                    }
                }
            } else if w.sleep.contains(&e) {
                // Line 7 of Alg. 1: choose from en(C) \ D.
                let leaf = match self.first_awake(&w.threads, &run.enabled(s)?, &w.sleep) {
                    None => Leaf::Blocked,
                    Some(entry) => {
                        let mut schedule: Vec<ThreadId> = self.path.iter().map(|n| n.tid).collect();
                        schedule.push(entry);
                        Leaf::Redirect { schedule, from: s, sleep: std::mem::take(&mut w.sleep) }
                    }
                };
                w.leaf = Some(leaf);
                return Ok(());
            }
            let cut = if done[0].kind == EventKind::Kill { step.cut } else { None };
            self.path.push(Node { event: Some(e), tid: step.entry(), action, cut, access_mark, since_before, sleep: w.sleep.clone(), runs_at: self.stats.runs, marks: None });
            self.since[tid] = 0;
            self.c.push(&self.u, e);
            let alt = match done {
                [x] => self.alternate(&w.threads, step.chosen, &Event { kind, ..*x }, action),
                _ => None,
            };
            self.extensions.of_event(&mut self.u, &self.objects, e, own, alt);
            if !w.sleep.is_empty() {
                let objs = self.u.objects(e);
                w.sleep.retain(|&d| self.u.objects(d).iter().all(|o| !objs.contains(o)));
            }
            w.s += 1;
        }
        if !ended {
            return Ok(());
        }
        if !w.follow.is_empty() {
            return Err(VerifyError::Nondeterministic("a run ended before the events an earlier run predicted".into()));
        }
        for op in run.blocked() {
            let ev = as_event(op);
            let (a, own) = self.action_for(&w.threads, op.tid, op.site, op.kind, &[ev]);
            if self.no_event(a) {
                continue;
            }
            let preds: Vec<Option<EventIdx>> = self.u.actions(a).objects.iter().map(|&o| self.c.last(o)).collect();
            let gap = self.since.get(op.tid.0 as usize).copied().unwrap_or(0);
            self.extensions.of_blocked(&mut self.u, &self.objects, a, op.kind, &preds, own, gap, update_labels::source_of(&ev));
        }
        self.cut_at_end(&w.threads);
        w.leaf = Some(Leaf::Maximal);
        Ok(())
    }

    /// Undo what a node popped from the path recorded: its accesses, and its thread's count of
    /// steps since its last event.
    pub(super) fn undo_accesses(&mut self, node: &Node) {
        while self.access_undo.len() > node.access_mark {
            let undo = self.access_undo.pop().expect("above the mark");
            self.undo_access(undo);
        }
        self.since[node.tid.index()] = node.since_before;
    }
}
