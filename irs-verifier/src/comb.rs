//! `Alt` by a comb (QPOR paper §5, Def. 5–6): a k-partial alternative to the sleep set `D`
//! after `C` is a configuration `J`, compatible with `C` and avoiding `D`, that conflicts with
//! `k` events of `D` (all of them for optimal exploration, `k = ∞`).
//!
//! One spike per selected `d ∈ D` (the most recently added ones: the event just explored is
//! always among them). Since every `d` is enabled at `C`, an event compatible with `C` is in
//! conflict with `d` iff its history holds an event in *immediate* conflict with `d`, which then
//! shares an object with `d` and has the same predecessor on it; so a spike holds `d`'s siblings
//! in its objects' trees that are compatible with `C` and have no event of `D` in their history
//! (a larger event would only add history). Siblings in a *thread's* tree need not be looked at:
//! another event of `d`'s thread after the same predecessor differs from `d` on some other
//! object, and its history holds a sibling of `d` on that object, which serves as well. A combination of pairwise compatible events, one
//! per spike, gives `J = [e'_1] ∪ … ∪ [e'_k]`.

use crate::configuration::Configuration;
use crate::object_table::{ObjClass, ObjectTable};
use crate::unfolding::{EventIdx, Unfolding};

/// The events of `J \ C` in an order that respects causality, or `None` if there is no
/// k-partial alternative (`k = None`: optimal).
pub fn alternative(u: &Unfolding, objects: &ObjectTable, c: &Configuration, sleep: &[EventIdx], k: Option<usize>) -> Option<Vec<EventIdx>> {
    let selected = match k {
        Some(k) if sleep.len() > k => &sleep[sleep.len() - k..],
        _ => sleep,
    };
    let mut spikes: Vec<Vec<EventIdx>> = Vec::with_capacity(selected.len());
    for &d in selected {
        let mut spike = Vec::new();
        for (o, p) in u.preds(d) {
            if objects.class(o) == ObjClass::Thread {
                continue;
            }
            for &s in u.children(o, p) {
                if s != d && !spike.contains(&s) && c.compatible(u, s) && sleep.iter().all(|&x| !u.le(x, s)) {
                    spike.push(s);
                }
            }
        }
        if spike.is_empty() {
            return None;
        }
        spikes.push(spike);
    }
    // Fewest choices first: fails fast.
    spikes.sort_by_key(|s| s.len());
    let mut chosen = Vec::with_capacity(spikes.len());
    if !search(u, &spikes, &mut chosen) {
        return None;
    }
    Some(history_outside(u, c, &chosen))
}

fn search(u: &Unfolding, spikes: &[Vec<EventIdx>], chosen: &mut Vec<EventIdx>) -> bool {
    let Some(spike) = spikes.get(chosen.len()) else { return true };
    for &s in spike {
        if chosen.iter().all(|&x| x == s || !u.conflict(x, s)) {
            chosen.push(s);
            if search(u, spikes, chosen) {
                return true;
            }
            chosen.pop();
        }
    }
    false
}

/// `[e_1] ∪ … ∪ [e_n] \ C`, causes before effects.
pub fn history_outside(u: &Unfolding, c: &Configuration, tops: &[EventIdx]) -> Vec<EventIdx> {
    let mut out = Vec::new();
    let mut seen = std::collections::HashSet::new();
    // Iterative post-order over immediate predecessors.
    for &top in tops {
        let mut stack = vec![(top, false)];
        while let Some((e, expanded)) = stack.pop() {
            if expanded {
                out.push(e);
                continue;
            }
            if !seen.insert(e) || c.contains(u, e) {
                continue;
            }
            stack.push((e, true));
            for (_, p) in u.preds(e) {
                if let Some(p) = p {
                    if !seen.contains(&p) {
                        stack.push((p, false));
                    }
                }
            }
        }
    }
    out
}
