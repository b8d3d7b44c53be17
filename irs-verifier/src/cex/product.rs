//! Every placement of a memory event on several objects (see [`Product`]): the part of
//! conflicting extensions (000 §5.3) that a write with its word's reader copies (DESIGN §3's
//! reads-commute refinement, `word_readers`), an access spanning words, a free, or an operation
//! on a mutex that is on the mutex's word too needs.

use super::{barrier, mutex_free_after, rwlock, semaphore};
use crate::object_table::{ObjIdx, ObjectTable};
use crate::unfolding::{ActionIdx, EventIdx, Unfolding};
use crate::update_labels::{self, Source};
use shared_proto::EventKind;

/// Memory events on at most this many objects besides their thread get every placement (see
/// [`Product`]); wider ones (a large `memcpy`) are moved up one object at a time, with the
/// smallest history on the others.
pub(super) const MAX_PRODUCT_OBJECTS: usize = 32;

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
///
/// An operation on a mutex that is on a word too (its first word, `dependence::objects_of`)
/// is placed the same way, with the mutex as one of the objects: a lock only where the mutex is
/// free after its predecessor there, a trylock anywhere, failing where the mutex is held. A
/// semaphore's operation likewise: a wait only where the count is above 0, a trywait anywhere,
/// failing where it is 0 (`semaphore`).
#[derive(Default)]
pub(super) struct Product {
    /// Per object other than the thread's (by slot of the action's objects), its candidates,
    /// deepest first: (event, depth on the object).
    cands: Vec<Vec<(Option<EventIdx>, u32)>>,
    slots: Vec<usize>,
    chosen: Vec<usize>,
    new_preds: Vec<Option<EventIdx>>,
    /// The slot (in `slots`) of the mutex, if the event is on one.
    mutex: Option<usize>,
    /// When to stop enumerating (the exploration's time limit): the placements of an event on
    /// several objects can number millions (a write against readers who each read it hundreds
    /// of times, each on its own copy), and a walk must not outlast the limit. Past it no more
    /// placements are made ([`Product::expired`]); the exploration stops at the limit right
    /// after the walk, `incomplete`, so none is ever missing from a verdict. Likewise at the
    /// memory limit.
    pub(super) deadline: Option<std::time::Instant>,
    /// The same for the exploration's memory limit (bytes of RSS).
    pub(super) memory_limit: Option<u64>,
    /// Placements tried since the clock and the RSS were last read.
    tried: u32,
    expired: Option<super::Stop>,
}

/// Placements tried between two readings of the clock and the RSS.
const CLOCK_EVERY: u32 = 4096;

impl Product {
    /// Did the enumeration stop at a limit (some placements not made)?
    pub(super) fn expired(&self) -> Option<super::Stop> {
        self.expired
    }

    #[allow(clippy::too_many_arguments)]
    /// `mutex`: the index in `objs` of the mutex the event is on, if any.
    pub(super) fn add(&mut self, u: &mut Unfolding, objects: &ObjectTable, action: ActionIdx, kind: EventKind, preds: &[Option<EventIdx>], objs: &[ObjIdx], own: ObjIdx, t0: Option<EventIdx>, mutex: Option<usize>, gap: u32, src: Source) {
        self.slots.clear();
        self.slots.extend((0..objs.len()).filter(|&i| objs[i] != own));
        self.mutex = mutex.and_then(|m| self.slots.iter().position(|&i| i == m));
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
        self.choose(u, objects, action, kind, objs, gap, src);
    }

    /// Choose a candidate for the next object (each agreeing with those chosen), and make the
    /// event once every object has one.
    #[allow(clippy::too_many_arguments)]
    fn choose(&mut self, u: &mut Unfolding, objects: &ObjectTable, action: ActionIdx, kind: EventKind, objs: &[ObjIdx], gap: u32, src: Source) {
        self.tried += 1;
        if self.tried >= CLOCK_EVERY && self.expired.is_none() {
            self.tried = 0;
            if self.deadline.is_some_and(|d| std::time::Instant::now() >= d) {
                self.expired = Some(super::Stop::Time);
            } else if self.memory_limit.is_some_and(|m| crate::memory_limit::rss_bytes().is_some_and(|r| r >= m)) {
                self.expired = Some(super::Stop::Memory);
            }
        }
        if self.expired.is_some() {
            return;
        }
        let level = self.chosen.len();
        if level == self.slots.len() {
            if self.chosen.iter().any(|&c| c != 0) {
                let kind = match (kind, self.mutex) {
                    (EventKind::TryLock, Some(m)) if !mutex_free_after(u, objs[self.slots[m]], self.new_preds[self.slots[m]]) => EventKind::TryLockFail,
                    (k, _) if k.on_semaphore() => match semaphore::placed(k, semaphore::count_after(u, objects, objs, &self.new_preds)) {
                        Some(k) => k,
                        None => return,
                    },
                    (k, _) if k.on_rwlock() => match rwlock::placed(k, rwlock::holders_after(u, objects, objs, &self.new_preds)) {
                        Some(k) => k,
                        None => return,
                    },
                    (k, _) if k.on_barrier() && !barrier::enabled(u, objects, objs, &self.new_preds, k, u.actions(action).thread) => return,
                    (k, _) => k,
                };
                if update_labels::label(u, objects, action, &self.new_preds, kind, src) != kind {
                    return;
                }
                update_labels::make(u, objects, action, &self.new_preds, kind, gap, src);
            }
            return;
        }
        let o = objs[self.slots[level]];
        for c in 0..self.cands[level].len() {
            let (p, d) = self.cands[level][c];
            if kind == EventKind::Lock && self.mutex == Some(level) && !mutex_free_after(u, o, p) {
                continue;
            }
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
            self.choose(u, objects, action, kind, objs, gap, src);
            self.chosen.pop();
        }
    }
}

