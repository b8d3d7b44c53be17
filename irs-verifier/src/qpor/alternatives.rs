//! Backtracking (Alg. 1 lines 11–12): the nodes of the path are popped and, at each, the event
//! just explored joins the sleep set `D`; the comb looks for a k-partial alternative `J` to `D`
//! after `C` (000 §5, Definitions 5–6; `crate::comb`). The first node with one is where the next
//! run branches off, and its schedule is the path followed by a linearisation of `J`. Nodes
//! that return on the leftmost branch make their prefix safe (DESIGN §8, publishing). It never
//! runs the program.

use super::report::Hooks;
use super::{Verifier, VerifyError};
use crate::object_table::ObjectTable;
use crate::thread_names::StableThread;
use crate::unfolding::{EventIdx, Unfolding};
use shared_proto::{EventKind, ThreadId};
use std::collections::HashMap;
use std::time::Instant;

/// Where the next run branches off: the sleep set `D ∪ {e}` of the node backtracked to, the
/// alternative `J` found there, the runs its subtree has taken so far, and whether the node has
/// had more than one alternative (see `maybe_snapshot`).
pub(super) struct Branch {
    pub(super) sleep: Vec<EventIdx>,
    pub(super) alternative: Vec<EventIdx>,
    pub(super) runs_below: u64,
    pub(super) busy: bool,
}

impl Verifier<'_> {
    /// Pop the path back to the deepest node with a k-partial alternative (`None`: none is
    /// left, the exploration is complete). `leftmost`: the depth the leftmost branch has
    /// returned to, once the first leaf is reached; every node that returns on it makes its
    /// prefix safe, told through `hooks` when no bug was found.
    pub(super) fn backtrack(&mut self, leftmost: &mut Option<usize>, hooks: &mut dyn Hooks) -> Option<Branch> {
        let backtracking = Instant::now();
        let mut next = None;
        while let Some(node) = self.path.pop() {
            self.undo_accesses(&node);
            if let Some(event) = node.event {
                self.c.pop();
                // D ∪ {e}, in a buffer kept across nodes (most find no alternative).
                let mut d = std::mem::take(&mut self.sleep_buf);
                d.clear();
                d.extend_from_slice(&node.sleep);
                d.push(event);
                if let Some(j) = self.comb.alternative(&self.u, &self.objects, &self.c, &d, self.opts.k) {
                    let busy = d.len() >= 2;
                    next = Some(Branch { sleep: d, alternative: j, runs_below: self.stats.runs - node.runs_at, busy });
                    break;
                }
                self.sleep_buf = d;
            }
            // `Explore(C_i, ...)` returned. On the leftmost branch (D = ∅ there) every
            // maximal configuration containing C_i has been explored, all of them since the
            // first run: C_i is safe if no bug was found yet (DESIGN §8, publishing).
            // An execution that did not end (time or event limit) leaves its subtree
            // unexplored beyond it: nothing above it is proven safe either.
            let i = self.path.len();
            if leftmost.is_some_and(|b| i < b) && self.bugs.is_empty() && self.nonterminating.is_empty() && self.thread_bound_cuts == 0 {
                *leftmost = Some(i);
                if self.told_safe.is_none_or(|t| i < t) {
                    self.told_safe = Some(i);
                    self.refresh_stats();
                    hooks.safe_prefix(i, &self.stats);
                }
            }
        }
        self.stats.backtrack_micros += backtracking.elapsed().as_micros() as u64;
        next
    }

    /// The schedule of the current path followed by `extra` (events outside `C`, causes first).
    pub(super) fn schedule_through(&self, extra: &[EventIdx]) -> Result<Vec<ThreadId>, VerifyError> {
        let mut runtime: HashMap<StableThread, ThreadId> = HashMap::new();
        runtime.insert(StableThread(0), ThreadId(0));
        let mut next = 1u32;
        let mut created = |u: &Unfolding, objects: &ObjectTable, e: EventIdx, runtime: &mut HashMap<StableThread, ThreadId>| {
            if u.event_kind(e) == EventKind::Create {
                let me = u.thread(e);
                for &o in u.objects(e) {
                    if let Some(t) = objects.thread_of(o).filter(|&t| t != me) {
                        runtime.insert(t, ThreadId(next));
                        next += 1;
                    }
                }
            }
        };
        let mut out = Vec::with_capacity(self.path.len() + extra.len());
        for n in &self.path {
            out.push(n.tid);
            if let Some(e) = n.event {
                created(&self.u, &self.objects, e, &mut runtime);
            }
        }
        // Each event after the steps its thread takes before it that are no events, less those
        // the path has taken already for its first one.
        let mut taken: HashMap<ThreadId, u32> = HashMap::new();
        for &e in extra {
            let t = self.u.thread(e);
            let Some(&rt) = runtime.get(&t) else {
                return Err(VerifyError::Internal(format!("an alternative has an event of {t:?} before its creation")));
            };
            let done = taken.insert(rt, 0).unwrap_or_else(|| self.since.get(rt.0 as usize).copied().unwrap_or(0));
            let Some(before) = self.u.gap(e).checked_sub(done) else {
                return Err(VerifyError::Internal(format!("an alternative's event of {t:?} comes {} steps after its predecessor, the path has taken {done}", self.u.gap(e))));
            };
            out.extend(std::iter::repeat_n(rt, before as usize));
            out.push(rt.with_choice(self.u.action_of(e).choice));
            created(&self.u, &self.objects, e, &mut runtime);
        }
        Ok(out)
    }
}
