//! The configuration `C` the exploration stands at (QPOR paper, Alg. 1): the events along the
//! current branch, with the last event on every object, undone in stack order on backtracking,
//! and a membership bit per event, so that "is `x` in `C`" costs no walk in an object's tree.
//! The last events' depths in their objects' trees are kept beside them: the comb compares a
//! candidate's thread predecessor's depth with its thread's in `C` for every candidate, most of
//! them rejected by that alone.

use crate::object_table::ObjIdx;
use super::{EventIdx, Unfolding};

#[derive(Default)]
pub struct Configuration {
    /// Per object, the last event on it in `C` and that event's depth in the object's tree.
    last: Vec<Option<(EventIdx, u32)>>,
    events: Vec<EventIdx>,
    undo: Vec<(ObjIdx, Option<(EventIdx, u32)>)>,
    marks: Vec<usize>,
    /// Bit `e` is set iff event `e` is in `C` (events of `C` are never pruned, so a reused
    /// index is never set).
    member: Vec<u64>,
}

impl Configuration {
    pub fn last(&self, o: ObjIdx) -> Option<EventIdx> {
        self.last_with_depth(o).map(|(e, _)| e)
    }

    /// The last event on `o` in `C` with its depth in `o`'s tree.
    pub fn last_with_depth(&self, o: ObjIdx) -> Option<(EventIdx, u32)> {
        self.last.get(o.0 as usize).copied().flatten()
    }

    /// The depth of `C`'s last event on `o` in `o`'s tree (0: none).
    pub fn last_depth(&self, o: ObjIdx) -> u32 {
        self.last_with_depth(o).map_or(0, |(_, d)| d)
    }

    pub fn push(&mut self, u: &Unfolding, e: EventIdx) {
        self.marks.push(self.undo.len());
        for (o, depth) in u.depths(e) {
            let i = o.0 as usize;
            if self.last.len() <= i {
                self.last.resize(i + 1, None);
            }
            self.undo.push((o, self.last[i]));
            self.last[i] = Some((e, depth));
        }
        self.events.push(e);
        let (w, b) = (e.0 as usize / 64, e.0 % 64);
        if self.member.len() <= w {
            self.member.resize(w + 1, 0);
        }
        self.member[w] |= 1 << b;
    }

    pub fn pop(&mut self) -> Option<EventIdx> {
        let e = self.events.pop()?;
        let mark = self.marks.pop().expect("one mark per event");
        while self.undo.len() > mark {
            let (o, prev) = self.undo.pop().expect("above mark");
            self.last[o.0 as usize] = prev;
        }
        self.member[e.0 as usize / 64] &= !(1 << (e.0 % 64));
        Some(e)
    }

    /// `x ∈ C`.
    pub fn contains(&self, x: EventIdx) -> bool {
        self.member.get(x.0 as usize / 64).is_some_and(|w| w & (1 << (x.0 % 64)) != 0)
    }

    /// `[x] ∪ C` is a configuration, for `x ∉ C`; `checked`: an object of `x` whose immediate
    /// predecessor the caller already knows to fit `C`.
    pub fn compatible_outside(&self, u: &Unfolding, x: EventIdx, checked: Option<ObjIdx>) -> bool {
        debug_assert!(!self.contains(x));
        u.compatible_outside(x, |o| self.last_with_depth(o), |y| self.contains(y), checked)
    }
}
