//! An event's frontier (the `tmax` of the QPOR paper §5.1, extended from threads to every
//! object, see `unfolding`): for every object touched in the event's history, the last event on
//! it. Stored as chunks of [`CHUNK`] consecutive objects, each chunk shared (reference-counted)
//! between all the events whose frontiers agree on it.
//!
//! A frontier holds an entry for every object its history touched, so a flat copy per event
//! costs O(objects) and the events of one long execution O(events × objects) together: 14 KB an
//! event, and gigabytes for the path of a long execution, on a program that touches a few
//! thousand words. But an event's frontier is its predecessor's with its own objects changed
//! (or a merge of its predecessors', which mostly agree): with shared chunks it costs one
//! pointer per chunk and a fresh chunk only where it differs. Two frontiers that share a chunk
//! also agree on all its objects, which lets a conflict test skip the chunk whole.

use crate::object_table::ObjIdx;

/// An event, by its index in the unfolding's table (`unfolding::EventIdx`'s number; this
/// module stands below the unfolding).
pub type Ev = u32;
use std::rc::Rc;

const BITS: u32 = 6;
/// Objects per chunk.
pub const CHUNK: usize = 1 << BITS;
/// No event on the object in the history.
const NONE: u32 = u32::MAX;

type Chunk = Rc<[u32; CHUNK]>;

#[derive(Default)]
pub struct Frontier {
    /// Chunk `i` holds objects `i * CHUNK ..`; `None`: none of them touched.
    chunks: Vec<Option<Chunk>>,
}

fn split(o: ObjIdx) -> (usize, usize) {
    ((o.0 >> BITS) as usize, o.0 as usize & (CHUNK - 1))
}

fn obj(chunk: usize, slot: usize) -> ObjIdx {
    ObjIdx(((chunk << BITS) | slot) as u32)
}

impl Frontier {
    /// Empty it, keeping its own vector (the chunks are released).
    pub fn clear(&mut self) {
        self.chunks.clear();
    }

    /// The last event on `o`, if the history touched `o`.
    pub fn get(&self, o: ObjIdx) -> Option<Ev> {
        let (i, j) = split(o);
        let v = self.chunks.get(i)?.as_ref()?[j];
        (v != NONE).then_some(v)
    }

    /// Make `e` the last event on `o` (copying the chunk if it is shared).
    pub fn set(&mut self, o: ObjIdx, e: Ev) {
        let (i, j) = split(o);
        if self.chunks.len() <= i {
            self.chunks.resize(i + 1, None);
        }
        let c = self.chunks[i].get_or_insert_with(|| Rc::new([NONE; CHUNK]));
        Rc::make_mut(c)[j] = e;
    }

    /// Become a copy of `other` (sharing all its chunks).
    pub fn copy_from(&mut self, other: &Frontier) {
        self.chunks.clear();
        self.chunks.extend_from_slice(&other.chunks);
    }

    /// Every `(object, last event)`, by object.
    pub fn iter(&self) -> impl Iterator<Item = (ObjIdx, Ev)> + '_ {
        self.chunks.iter().enumerate().filter_map(|(i, c)| c.as_ref().map(|c| (i, c))).flat_map(|(i, c)| {
            c.iter().enumerate().filter(|(_, &v)| v != NONE).map(move |(j, &v)| (obj(i, j), v))
        })
    }

    /// Merge `other` in: per object, the event `ours_deeper(object, ours, theirs)` says is the
    /// later one (both are on the object, and comparable). Chunks equal to one side's are
    /// shared with it.
    pub fn merge(&mut self, other: &Frontier, mut ours_deeper: impl FnMut(ObjIdx, Ev, Ev) -> bool) {
        if self.chunks.len() < other.chunks.len() {
            self.chunks.resize(other.chunks.len(), None);
        }
        for (i, theirs) in other.chunks.iter().enumerate() {
            let Some(theirs) = theirs else { continue };
            let slot = &mut self.chunks[i];
            let Some(ours) = slot else {
                *slot = Some(theirs.clone());
                continue;
            };
            if Rc::ptr_eq(ours, theirs) {
                continue;
            }
            let mut out: Option<[u32; CHUNK]> = None;
            for j in 0..CHUNK {
                let (a, b) = (ours[j], theirs[j]);
                if a == b || b == NONE {
                    continue;
                }
                if a == NONE || !ours_deeper(obj(i, j), a, b) {
                    out.get_or_insert(**ours)[j] = b;
                }
            }
            if let Some(out) = out {
                *slot = Some(if out == **theirs { theirs.clone() } else { Rc::new(out) });
            }
        }
    }

    /// Whether `f` holds for some object in both frontiers whose last events differ, given the
    /// object and the two events (chunks the two share are skipped: they agree everywhere).
    pub fn any_differing(&self, other: &Frontier, mut f: impl FnMut(ObjIdx, Ev, Ev) -> bool) -> bool {
        for (i, (a, b)) in self.chunks.iter().zip(&other.chunks).enumerate() {
            let (Some(a), Some(b)) = (a, b) else { continue };
            if Rc::ptr_eq(a, b) {
                continue;
            }
            for j in 0..CHUNK {
                let (x, y) = (a[j], b[j]);
                if x != y && x != NONE && y != NONE && f(obj(i, j), x, y) {
                    return true;
                }
            }
        }
        false
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn set_get_iter_and_sharing() {
        let mut a = Frontier::default();
        a.set(ObjIdx(3), 1);
        a.set(ObjIdx(200), 2);
        assert_eq!(a.get(ObjIdx(3)), Some(1));
        assert_eq!(a.get(ObjIdx(4)), None);
        assert_eq!(a.get(ObjIdx(100_000)), None);
        assert_eq!(a.iter().collect::<Vec<_>>(), [(ObjIdx(3), 1), (ObjIdx(200), 2)]);
        let mut b = Frontier::default();
        b.copy_from(&a);
        b.set(ObjIdx(3), 5);
        // Copy on write: `a` is unchanged, and the untouched chunk is still shared.
        assert_eq!(a.get(ObjIdx(3)), Some(1));
        assert_eq!(b.get(ObjIdx(3)), Some(5));
        assert!(Rc::ptr_eq(a.chunks[3].as_ref().unwrap(), b.chunks[3].as_ref().unwrap()));
        let mut seen = Vec::new();
        assert!(!a.any_differing(&b, |o, x, y| {
            seen.push((o, x, y));
            false
        }));
        assert_eq!(seen, [(ObjIdx(3), 1, 5)], "only the differing entry, shared chunk skipped");
    }

    #[test]
    fn merge_takes_the_deeper_entry_and_shares_equal_chunks() {
        let mut a = Frontier::default();
        let mut b = Frontier::default();
        for o in 0..CHUNK as u32 * 2 {
            a.set(ObjIdx(o), o);
        }
        b.set(ObjIdx(1), 100);
        b.set(ObjIdx(2), 0);
        b.set(ObjIdx(500), 7);
        // "Deeper" here: the larger index.
        a.merge(&b, |_, x, y| x >= y);
        assert_eq!(a.get(ObjIdx(1)), Some(100));
        assert_eq!(a.get(ObjIdx(2)), Some(2));
        assert_eq!(a.get(ObjIdx(500)), Some(7));
        assert!(Rc::ptr_eq(a.chunks[500 / CHUNK].as_ref().unwrap(), b.chunks[500 / CHUNK].as_ref().unwrap()));
        let mut c = Frontier::default();
        c.copy_from(&a);
        c.merge(&a, |_, _, _| unreachable!("shared chunks are not compared"));
    }
}
