//! `Alt` by a comb (QPOR paper §5, Def. 5–6): a k-partial alternative to the sleep set `D`
//! after `C` is a configuration `J`, compatible with `C` and avoiding `D`, that conflicts with
//! `k` events of `D` (all of them for optimal exploration, `k = ∞`).
//!
//! One spike per selected `d ∈ D` (the most recently added ones: the event just explored is
//! always among them). Since every `d` is enabled at `C`, an event compatible with `C` is in
//! conflict with `d` iff its history holds an event in *immediate* conflict with `d`, which then
//! shares an object with `d` and has the same predecessor on it; so a spike holds `d`'s siblings
//! in its objects' trees that are compatible with `C` and have no event of `D` in their history
//! (a larger event would only add history). A combination of pairwise compatible events, one
//! per spike, gives `J = [e'_1] ∪ … ∪ [e'_k]`.
//!
//! Only siblings of *other threads* than `d`'s need to be looked at. Let `s` be a sibling of `d`
//! of `d`'s own thread, compatible with `C`, with `d ∉ [s]`, and let `f` be the first event of
//! that thread in `[s]` after `C` (`f ≠ d`). A thread's next action is a function of its history
//! (the executions are deterministic), so `f` has `d`'s action and differs from `d` in its
//! predecessor `q` on some object `o` other than the thread. Both `q` and `C`'s last event on
//! `o` are in configurations compatible with each other, so they are comparable; `q` before it
//! would put `f` in conflict with `C`, so `q` is after it, and the event `g` of `[f]` that
//! follows `C`'s last event on `o` is a sibling of `d` on `o`, of another thread (the thread's
//! events in `[f]` before `f` are in `C`), with `[g] ⊆ [s]`: `g` serves wherever `s` would.
//! This matters: after a join, a thread's next event exists once per history of the joined
//! threads, thousands of same-thread siblings that would otherwise be checked at every node.
//! For the same reason siblings in a *thread's* tree are not looked at, as long as no event is a
//! kill at the process's end: before the first, a thread's tree holds no event of another thread
//! that could be a sibling of one of its own (its creation is the root, joins follow its exit).
//! A kill of thread `v` is a sibling of `v`'s next event in `v`'s tree, and an alternative to
//! it: from then on thread trees are searched too ([`sibling_objects`]).
//!
//! A call of `__VERIFIER_nondet_*` is the one place where a thread's next action is not a
//! function of its history: each value it can take is an event of its own, a sibling of the
//! others in the thread's tree, all enabled where one is. So the spike of such an event holds
//! its siblings of its own thread that are nondet calls too.

use crate::object_table::{ObjClass, ObjectTable};
use crate::unfolding::{Child, Configuration, EventIdx, Unfolding};
use shared_proto::EventKind;

/// The comb's spikes, kept from one search to the next: a search runs at every node the
/// exploration backtracks over, and most find nothing.
#[derive(Default)]
pub struct Comb {
    spikes: Vec<Vec<EventIdx>>,
    chosen: Vec<EventIdx>,
    /// Scratch of [`history_outside`] (reused: it runs for every alternative found).
    seen: Vec<EventIdx>,
    stack: Vec<(EventIdx, bool)>,
}

impl Comb {
    /// The events of `J \ C` in an order that respects causality, or `None` if there is no
    /// k-partial alternative (`k = None`: optimal).
    pub fn alternative(&mut self, u: &Unfolding, objects: &ObjectTable, c: &Configuration, sleep: &[EventIdx], k: Option<usize>) -> Option<Vec<EventIdx>> {
        let selected = match k {
            Some(k) if sleep.len() > k => &sleep[sleep.len() - k..],
            _ => sleep,
        };
        if self.spikes.len() < selected.len() {
            self.spikes.resize_with(selected.len(), Vec::new);
        }
        let single = selected.len() == 1;
        // The newest first: the event just explored (last) is the one whose spike is most
        // often empty, which ends the search before the others' are scanned. (Each spike keeps
        // its place, so the search below sees the same order either way.)
        for (spike, &d) in self.spikes.iter_mut().zip(selected).rev() {
            spike.clear();
            let me = u.thread(d);
            if u.event_kind(d) == EventKind::Nondet {
                // A nondet call's other values: siblings of its own thread, each enabled at `C`
                // as `d` is (the argument above is about a thread's next action being a
                // function of its history, which a choice is not).
                let own = u.action_of(d).own;
                for child in u.child_entries(own, u.pred(d, own)) {
                    let s = child.event;
                    if s != d && child.thread == me && u.event_kind(s) == EventKind::Nondet && !spike.contains(&s) && c.compatible_outside(u, s, Some(child.own)) && sleep.iter().all(|&x| !u.le(x, s)) {
                        spike.push(s);
                    }
                }
                if single && !spike.is_empty() {
                    spike.truncate(1);
                    continue;
                }
            }
            'objects: for (o, p) in sibling_objects(u, objects, d) {
                for child in u.children_of_others(o, p, me) {
                    let s = child.event;
                    if fits_own(u, c, child) && !spike.contains(&s) && c.compatible_outside(u, s, Some(child.own)) && sleep.iter().all(|&x| !u.le(x, s)) {
                        spike.push(s);
                        if single {
                            // One spike: the search takes its first event.
                            break 'objects;
                        }
                    }
                }
            }
            if spike.is_empty() {
                return None;
            }
        }
        let spikes = &mut self.spikes[..selected.len()];
        // Fewest choices first: fails fast.
        spikes.sort_by_key(|s| s.len());
        self.chosen.clear();
        if !search(u, spikes, &mut self.chosen) {
            return None;
        }
        Some(history_outside(u, c, &self.chosen, &mut self.seen, &mut self.stack))
    }
}

/// The objects of `e` on which its siblings of other threads can serve alternatives, with `e`'s
/// predecessor on each: its memory words, mutexes and the process, and, once some event is a
/// kill, threads (see the module doc). Pruning keeps what the comb searches, so it uses this
/// too (`sibling_marks`).
pub fn sibling_objects<'u>(u: &'u Unfolding, objects: &'u ObjectTable, e: EventIdx) -> impl Iterator<Item = (crate::object_table::ObjIdx, Option<EventIdx>)> + 'u {
    let kills = u.has_kills();
    u.preds(e).filter(move |&(o, _)| kills || objects.class(o) != ObjClass::Thread)
}

/// Whether `s` (`∉ C`) fits `C` on its thread, decided from its tree entry where possible:
/// `C` must not have taken the thread past `s`'s predecessor there (it would hold another event
/// right after it), so `C`'s last event of the thread is that predecessor or an ancestor of it.
fn fits_own(u: &Unfolding, c: &Configuration, s: &Child) -> bool {
    match (c.last(s.own), s.own_pred) {
        (None, _) => true,
        (Some(_), None) => false,
        (Some(last), Some(p)) if last == p => true,
        (Some(last), Some(p)) => {
            // The depths first (in the entry and in `C`): they reject most candidates.
            let depth = c.last_depth(s.own);
            depth < s.own_pred_depth && !c.contains(p) && s.pred_descends_from(u, last, depth, |x| c.contains(x))
        }
    }
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
/// `seen` and `stack` are scratch.
pub fn history_outside(u: &Unfolding, c: &Configuration, tops: &[EventIdx], seen: &mut Vec<EventIdx>, stack: &mut Vec<(EventIdx, bool)>) -> Vec<EventIdx> {
    let mut out = Vec::new();
    // The events outside `C` met so far: a handful (an alternative adds a few events to `C`),
    // so a list beats a hash set.
    seen.clear();
    // Iterative post-order over immediate predecessors.
    for &top in tops {
        stack.clear();
        stack.push((top, false));
        while let Some((e, expanded)) = stack.pop() {
            if expanded {
                out.push(e);
                continue;
            }
            if c.contains(e) || seen.contains(&e) {
                continue;
            }
            seen.push(e);
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
