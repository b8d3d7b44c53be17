//! Pruning `U` (Alg. 1 line 13, 000 §3): `U := U ∩ Q_{C,D}`, amortised, keeping the events the
//! comb can still build alternatives from and their histories (`sibling_marks`). It
//! never removes an event of `C`, of a sleep set or of the alternative being followed, and what
//! it keeps is closed under causality.

use super::walk::Walk;
use super::Verifier;
use super::sibling_marks::SiblingMarks;
use crate::unfolding::{Configuration, EventIdx};
use std::time::Instant;

impl Verifier<'_> {
    /// Line 13 of Alg. 1, amortised: when `U` has doubled since the last time, keep only
    /// `Q_{C,D}`: the events of `C` and of the sleep sets along the path, the events in
    /// immediate conflict with any of them that alternatives can be built from (their siblings
    /// of other threads in the memory and mutex trees, see `comb`), and the histories of all
    /// these. Anything else a later branch needs, its own runs find again.
    ///
    /// Called as a run starts (the verifier waits for its prefix meanwhile), with the walk it
    /// begins: its sleep set is the next node's `D`, anchored at that node, and the events it
    /// is to follow are kept with their histories.
    pub(super) fn maybe_prune(&mut self, w: &Walk) {
        let live = self.u.live();
        if live < self.opts.prune_at || live < 2 * self.last_prune_live {
            return;
        }
        let pruning = Instant::now();
        // Each anchor with the depth of the first node whose `D` or event it is: its siblings
        // serve alternatives only at that node or deeper, against configurations that contain
        // `C` up to there, so a sibling in conflict with that prefix never serves (the comb
        // skips it) and is not kept. (The paper keeps every immediate conflict; this keeps those
        // the comb can still use, which is what bounds the siblings it searches.)
        // The siblings found at a node are remembered while it stays on the path (its prefix
        // does not change; see `sibling_marks`).
        let mut seen: std::collections::HashSet<EventIdx> = std::collections::HashSet::new();
        let mut keep = vec![false; self.u.capacity()];
        let mut stack: Vec<EventIdx> = Vec::new();
        let mark = |x: EventIdx, keep: &mut Vec<bool>, stack: &mut Vec<EventIdx>| {
            if !keep[x.0 as usize] {
                keep[x.0 as usize] = true;
                stack.push(x);
            }
        };
        let mut prefix = Configuration::default();
        let mut anchors = Vec::new();
        for level in 0..=self.path.len() {
            anchors.clear();
            let node = self.path.get_mut(level);
            let candidates = node.as_ref().map_or(&w.sleep[..], |n| &n.sleep[..]).iter().chain(node.as_ref().and_then(|n| n.event.as_ref()));
            anchors.extend(candidates.copied().filter(|&d| seen.insert(d)));
            for &a in &anchors {
                mark(a, &mut keep, &mut stack);
            }
            let (u, objects) = (&self.u, &self.objects);
            let mut fresh = None;
            let marks = match node {
                Some(n) => n.marks.get_or_insert_with(|| SiblingMarks::new(u, objects, &anchors)),
                None => fresh.insert(SiblingMarks::new(u, objects, &anchors)),
            };
            // Closed under causality with the prefix, which is marked already: no walk up.
            marks.scan(u, &prefix, |x| keep[x.0 as usize] = true);
            if let Some(e) = self.path.get(level).and_then(|n| n.event) {
                prefix.push(&self.u, e);
            }
        }
        for &j in &w.follow {
            mark(j, &mut keep, &mut stack);
        }
        // Close under causality.
        while let Some(x) = stack.pop() {
            for (_, p) in self.u.preds(x) {
                if let Some(p) = p {
                    mark(p, &mut keep, &mut stack);
                }
            }
        }
        self.refresh_stats();
        self.u.retain(&keep);
        for m in self.path.iter_mut().filter_map(|n| n.marks.as_mut()) {
            m.pruned(&self.u);
        }
        self.last_prune_live = self.u.live();
        self.stats.prune_micros += pruning.elapsed().as_micros() as u64;
    }
}
