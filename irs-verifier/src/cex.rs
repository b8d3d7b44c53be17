//! Conflicting extensions (QPOR paper §5.3, `cexp`), generalised from locks to every object. An
//! event `e` of `C` on a memory word or mutex `o` could have happened before the earlier events
//! on `o` that do not precede it causally: for each position `q` further up `o`'s chain (while
//! the event right after `q` is not in the history of `e`'s thread predecessor), the event with
//! `e`'s action and predecessors `[pt(e)] ∪ [q]` is in conflict with `C` and belongs to the
//! unfolding. A lock can only be taken where the mutex is free; a trylock fits anywhere and its
//! result follows from the position. Thread objects (creation, program order, joins) never
//! reorder, except for the kill of a thread at the process's end, which moves up the killed
//! thread's chain like an access up its word's: the end may come before any event of that
//! thread that the ender's history does not hold; and a join left waiting for good because the
//! thread it joins was killed, which moves before the kill. An end moves up the process's chain
//! (before another thread's end).

use crate::object_table::{ObjClass, ObjIdx, ObjectTable};
use crate::unfolding::{action_kind, ActionIdx, EventIdx, Unfolding};
use shared_proto::EventKind;

/// Whether `e` is an event of kind `kind` on `o` by a thread other than `o`'s own (a kill or a
/// join *of* the thread whose object `o` is, not one that thread performs on a third).
fn is_of(u: &Unfolding, e: EventIdx, o: ObjIdx, kind: EventKind) -> bool {
    u.event_kind(e) == kind && u.action_of(e).own != o
}

/// After `q` (the last event on mutex `m`, `None` for none), is `m` free?
pub fn mutex_free_after(u: &Unfolding, m: ObjIdx, mut q: Option<EventIdx>) -> bool {
    while let Some(x) = q {
        match u.event_kind(x) {
            EventKind::Lock | EventKind::TryLock => return false,
            EventKind::Unlock => return true,
            _ => q = u.pred(x, m),
        }
    }
    true
}

/// Computes conflicting extensions, with buffers kept from one call to the next (it runs for
/// every step of every run).
#[derive(Default)]
pub struct Extensions {
    preds: Vec<Option<EventIdx>>,
    objs: Vec<ObjIdx>,
    new_preds: Vec<Option<EventIdx>>,
    product: Product,
}

/// Memory events on at most this many objects besides their thread get every placement (see
/// [`Product`]); wider ones (a large `memcpy`) are moved up one object at a time, with the
/// smallest history on the others.
const MAX_PRODUCT_OBJECTS: usize = 32;

/// The conflicting extensions of a memory event on several objects: a write to a word read by
/// other threads (on the word and on each reader's copy, see `word_readers`), or an access that
/// spans words. Moving it up one object's chain with the smallest history on the others (as a
/// lock moves) misses events: with readers `R1`, `R2` of `x` and a write `w` after both, `w`
/// placed before `R1`'s read but still after `R2`'s is in immediate conflict with `R1`'s read,
/// and the only alternative that reaches "`R2` reads before `w`, `R1` after" needs it (the
/// exploration lost that trace without it). So every placement is made: on each object `o`, a
/// predecessor `P_o` on `o`'s chain in `C` between the thread predecessor's last event on `o`
/// and the event's own predecessor there, such that the placements agree (for every two
/// objects `o`, `x`: the last event on `x` in `[P_o]` is not deeper than `P_x`, so `P_x` is the
/// last event on `x` in the union of the histories). Each placement other than the event's own
/// is an event whose history is in `C` and which conflicts with it: `cex(C)` (000 §5.3) holds
/// exactly these.
#[derive(Default)]
struct Product {
    /// Per object other than the thread's (by slot of the action's objects), its candidates,
    /// deepest first: (event, depth on the object).
    cands: Vec<Vec<(Option<EventIdx>, u32)>>,
    slots: Vec<usize>,
    chosen: Vec<usize>,
    new_preds: Vec<Option<EventIdx>>,
}

impl Product {
    #[allow(clippy::too_many_arguments)]
    fn add(&mut self, u: &mut Unfolding, action: ActionIdx, kind: EventKind, preds: &[Option<EventIdx>], objs: &[ObjIdx], own: ObjIdx, t0: Option<EventIdx>, gap: u32) {
        self.slots.clear();
        self.slots.extend((0..objs.len()).filter(|&i| objs[i] != own));
        self.cands.resize_with(self.slots.len(), Vec::new);
        for (n, &i) in self.slots.iter().enumerate() {
            let o = objs[i];
            let stop = u.depth_on(t0.and_then(|t| u.last_on(t, o)), o);
            let c = &mut self.cands[n];
            c.clear();
            let (mut r, mut depth) = (preds[i], u.depth_on(preds[i], o));
            c.push((r, depth));
            while let Some(rr) = r {
                if depth <= stop {
                    break;
                }
                r = u.pred(rr, o);
                depth -= 1;
                c.push((r, depth));
            }
        }
        self.chosen.clear();
        self.new_preds.clear();
        self.new_preds.extend_from_slice(preds);
        self.new_preds.iter_mut().zip(objs).filter(|(_, &o)| o == own).for_each(|(p, _)| *p = t0);
        self.choose(u, action, kind, objs, gap);
    }

    /// Choose a candidate for the next object (each agreeing with those chosen), and make the
    /// event once every object has one.
    fn choose(&mut self, u: &mut Unfolding, action: ActionIdx, kind: EventKind, objs: &[ObjIdx], gap: u32) {
        let level = self.chosen.len();
        if level == self.slots.len() {
            if self.chosen.iter().any(|&c| c != 0) {
                u.event(action, &self.new_preds, kind, gap);
            }
            return;
        }
        let o = objs[self.slots[level]];
        for c in 0..self.cands[level].len() {
            let (p, d) = self.cands[level][c];
            let agrees = (0..level).all(|j| {
                let (pj, dj) = self.cands[j][self.chosen[j]];
                let oj = objs[self.slots[j]];
                u.depth_on(pj.and_then(|x| u.last_on(x, o)), o) <= d && u.depth_on(p.and_then(|x| u.last_on(x, oj)), oj) <= dj
            });
            if !agrees {
                continue;
            }
            self.chosen.push(c);
            self.new_preds[self.slots[level]] = p;
            self.choose(u, action, kind, objs, gap);
            self.chosen.pop();
        }
    }
}

impl Extensions {
    /// Add to `u` the conflicting extensions that `e` gives (`own` is the object of `e`'s
    /// thread).
    pub fn of_event(&mut self, u: &mut Unfolding, objects: &ObjectTable, e: EventIdx, own: ObjIdx) {
        let action = u.action_idx(e);
        let kind = u.event_kind(e);
        let mut preds = std::mem::take(&mut self.preds);
        preds.clear();
        preds.extend(u.preds(e).map(|(_, p)| p));
        let gap = u.gap(e);
        self.add_moved(u, objects, action, kind, &preds, own, gap);
        self.preds = preds;
    }

    /// The same for an operation a thread is blocked on at the end of a run (a deadlock): the
    /// event it would be with predecessors `preds` (the configuration's last events on its
    /// objects) does not exist, but placed before earlier events on its objects it may: those
    /// events are in `cex(C)` although no event of `C` has their action.
    /// `gap`: the steps the thread took since its last event (see [`Unfolding::gap`]).
    #[allow(clippy::too_many_arguments)]
    pub fn of_blocked(&mut self, u: &mut Unfolding, objects: &ObjectTable, action: ActionIdx, kind: EventKind, preds: &[Option<EventIdx>], own: ObjIdx, gap: u32) {
        self.add_moved(u, objects, action, kind, preds, own, gap);
    }

    /// The extensions share the thread predecessor, and so the gap, of the event they move.
    #[allow(clippy::too_many_arguments)]
    fn add_moved(&mut self, u: &mut Unfolding, objects: &ObjectTable, action: ActionIdx, kind: EventKind, preds: &[Option<EventIdx>], own: ObjIdx, gap: u32) {
        let kind = action_kind(kind);
        let (objs, new_preds) = (&mut self.objs, &mut self.new_preds);
        objs.clear();
        objs.extend_from_slice(&u.actions(action).objects);
        let t0 = objs.iter().position(|&o| o == own).and_then(|i| preds[i]);
        let others = objs.len() - 1;
        if (2..=MAX_PRODUCT_OBJECTS).contains(&others) && objs.iter().all(|&o| o == own || matches!(objects.class(o), ObjClass::Memory | ObjClass::Atomic)) {
            self.product.add(u, action, kind, preds, objs, own, t0, gap);
            return;
        }
        for (slot, &o) in objs.iter().enumerate() {
            let class = objects.class(o);
            if class == ObjClass::Thread && o == own {
                continue;
            }
            // On another thread's object only a kill moves freely; a join (of a thread that ended)
            // moves only before a kill (which made it wait for good).
            let only_past_kills = class == ObjClass::Thread && kind != EventKind::Kill;
            // The walk up `o`'s chain stops at the first event in the history of the thread
            // predecessor `t0`. The predecessors and `t0` are all in one configuration (`C`), where
            // the events on `o` form one chain: so `r ≤ t0` iff `r` is not deeper on `o` than
            // `t0`'s last event there, a depth comparison instead of a causality query, and the
            // depth drops by one a step.
            let stop = u.depth_on(t0.and_then(|t| u.last_on(t, o)), o);
            let mut r = preds[slot];
            let mut depth = u.depth_on(r, o);
            while let Some(rr) = r {
                if depth <= stop || (only_past_kills && !is_of(u, rr, o, EventKind::Kill)) {
                    break;
                }
                let q = u.pred(rr, o);
                r = q;
                depth -= 1;
                // The thread had ended where it was killed only if the event before the kill on
                // its object is its exit or a join of it by another thread. Its own last event
                // being a join (of a third thread) does not make it ended (found by the
                // differential campaign, seed 3740: a join was placed after it, and the run
                // asked for it found the join disabled).
                if only_past_kills && !q.is_some_and(|q| u.event_kind(q) == EventKind::Exit || is_of(u, q, o, EventKind::Join)) {
                    break;
                }
                let free = class == ObjClass::Mutex && mutex_free_after(u, o, q);
                if kind == EventKind::Lock && !free {
                    continue;
                }
                new_preds.clear();
                new_preds.extend(objs.iter().map(|&x| {
                    if x == own {
                        t0
                    } else if x == o {
                        q
                    } else {
                        deeper(u, x, t0.and_then(|t| u.last_on(t, x)), q.and_then(|q| u.last_on(q, x)))
                    }
                }));
                let new_kind = match kind {
                    EventKind::TryLock if !free => EventKind::TryLockFail,
                    k => k,
                };
                u.event(action, new_preds, new_kind, gap);
            }
        }
    }
}

/// The later of two events on `o` known to be comparable: the deeper one in `o`'s tree.
fn deeper(u: &Unfolding, o: ObjIdx, a: Option<EventIdx>, b: Option<EventIdx>) -> Option<EventIdx> {
    match (a, b) {
        (Some(a), Some(b)) => Some(if u.depth_on(Some(a), o) >= u.depth_on(Some(b), o) { a } else { b }),
        (a, None) => a,
        (None, b) => b,
    }
}
