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
//! (before another thread's end). A memory event on several objects (a write with its word's
//! reader copies, an access spanning words, a free) or an operation on a mutex that is on a word
//! too (the mutex's first word, when a free makes it racy) gets every agreeing placement
//! instead (`product`); so does a semaphore's, barrier's or rwlock's operation other than a
//! post, an arrival on its thread's copy or a reader's release, placed only where it is enabled
//! (`semaphore`, `barrier`, `rwlock`).

pub mod barrier;
mod product;
pub mod rwlock;
pub mod semaphore;

use crate::object_table::{ObjClass, ObjIdx, ObjectTable};
use product::{Product, MAX_PRODUCT_OBJECTS};
use crate::unfolding::{action_kind, ActionIdx, EventIdx, Unfolding};
use crate::update_labels::{self, Source};
use shared_proto::EventKind;

/// Whether `e` is an event of kind `kind` on `o` by a thread other than `o`'s own (a kill or a
/// join *of* the thread whose object `o` is, not one that thread performs on a third).
fn is_of(u: &Unfolding, e: EventIdx, o: ObjIdx, kind: EventKind) -> bool {
    u.event_kind(e) == kind && u.action_of(e).own != o
}

/// Whether a primitive's operation of kind `kind` on `objs` is enabled wherever it is placed,
/// as it is: a post, a reader's release of an rwlock, an arrival on its thread's copy only
/// (arrivals commute while each generation has room). The others are placed by `product` with
/// their enabling condition (`semaphore`, `barrier`, `rwlock`).
fn always_enabled(objects: &ObjectTable, objs: &[ObjIdx], kind: EventKind) -> bool {
    match kind {
        EventKind::SemPost | EventKind::RwReadUnlock => true,
        EventKind::BarrierArrive => !objs.iter().any(|&o| objects.class(o) == ObjClass::Native && !objects.is_copy(o)),
        _ => false,
    }
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

/// The limit at which an enumeration of placements stopped.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Stop {
    Time,
    Memory,
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

impl Extensions {
    /// Stop enumerating placements of events on several objects at `deadline` or once the
    /// process's RSS reaches `memory` bytes (the exploration's limits; see `product`).
    pub fn set_limits(&mut self, deadline: Option<std::time::Instant>, memory: Option<u64>) {
        self.product.deadline = deadline;
        self.product.memory_limit = memory;
    }

    /// Were placements left out at a limit? The exploration must then stop at that limit.
    pub fn expired(&self) -> Option<Stop> {
        self.product.expired()
    }

    /// Add to `u` the conflicting extensions that `e` gives (`own` is the object of `e`'s
    /// thread).
    /// `alt`: for an update the value model follows, its other version's action (the write
    /// version of one that is a read here, and the other way round; see `update_labels`).
    pub fn of_event(&mut self, u: &mut Unfolding, objects: &ObjectTable, e: EventIdx, own: ObjIdx, alt: Option<(ActionIdx, EventKind)>) {
        let action = u.action_idx(e);
        let kind = u.event_kind(e);
        let src = update_labels::source_of_event(u, e);
        let mut preds = std::mem::take(&mut self.preds);
        preds.clear();
        preds.extend(u.preds(e).map(|(_, p)| p));
        let gap = u.gap(e);
        self.add_moved(u, objects, action, kind, &preds, own, gap, src);
        if let Some((alt, alt_kind)) = alt {
            update_labels::alternate_preds(u, e, alt, &mut preds);
            self.add_moved(u, objects, alt, alt_kind, &preds, own, gap, src);
        }
        self.preds = preds;
    }

    /// The same for an operation a thread is blocked on at the end of a run (a deadlock): the
    /// event it would be with predecessors `preds` (the configuration's last events on its
    /// objects) does not exist, but placed before earlier events on its objects it may: those
    /// events are in `cex(C)` although no event of `C` has their action.
    /// `gap`: the steps the thread took since its last event (see [`Unfolding::gap`]).
    #[allow(clippy::too_many_arguments)]
    /// `src`: what the value model follows of the operation (`update_labels`).
    pub fn of_blocked(&mut self, u: &mut Unfolding, objects: &ObjectTable, action: ActionIdx, kind: EventKind, preds: &[Option<EventIdx>], own: ObjIdx, gap: u32, src: Source) {
        self.add_moved(u, objects, action, kind, preds, own, gap, src);
    }

    /// The extensions share the thread predecessor, and so the gap, of the event they move.
    #[allow(clippy::too_many_arguments)]
    /// An update the value model follows is placed only where the model labels it as `kind`
    /// says (the other version is placed by its own call).
    fn add_moved(&mut self, u: &mut Unfolding, objects: &ObjectTable, action: ActionIdx, kind: EventKind, preds: &[Option<EventIdx>], own: ObjIdx, gap: u32, src: Source) {
        let kind = action_kind(kind);
        let (objs, new_preds) = (&mut self.objs, &mut self.new_preds);
        objs.clear();
        objs.extend_from_slice(&u.actions(action).objects);
        let t0 = objs.iter().position(|&o| o == own).and_then(|i| preds[i]);
        let others = objs.len() - 1;
        let placeable = |o: ObjIdx| matches!(objects.class(o), ObjClass::Memory | ObjClass::Atomic);
        let mutexes = objs.iter().filter(|&&o| objects.class(o) == ObjClass::Mutex).count();
        // A semaphore's or barrier's operation other than a post or an arrival (always enabled)
        // is placed with its enabling condition in view, whatever its number of objects.
        let sem = (kind.on_semaphore() || kind.on_barrier() || kind.on_rwlock()) && !always_enabled(objects, objs, kind) && others <= MAX_PRODUCT_OBJECTS;
        if sem || ((2..=MAX_PRODUCT_OBJECTS).contains(&others) && mutexes <= 1 && objs.iter().all(|&o| o == own || placeable(o) || objects.class(o) == ObjClass::Mutex)) {
            let mutex = objs.iter().position(|&o| objects.class(o) == ObjClass::Mutex);
            self.product.add(u, objects, action, kind, preds, objs, own, t0, mutex, gap, src);
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
                if update_labels::label(u, objects, action, new_preds, new_kind, src) != new_kind {
                    continue;
                }
                update_labels::make(u, objects, action, new_preds, new_kind, gap, src);
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
