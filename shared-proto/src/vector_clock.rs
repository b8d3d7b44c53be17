//! Vector clocks over logical threads: `c[t]` = how many events of thread `t` happen before
//! (or are) the event the clock belongs to (DESIGN §4: cutoff vectors and requirements are
//! vectors of event counts too).

use crate::ids::ThreadId;

#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct VectorClock(Vec<u32>);

impl VectorClock {
    pub fn new(threads: usize) -> VectorClock {
        VectorClock(vec![0; threads])
    }

    pub fn get(&self, t: ThreadId) -> u32 {
        self.0.get(t.index()).copied().unwrap_or(0)
    }

    pub fn set(&mut self, t: ThreadId, v: u32) {
        if self.0.len() <= t.index() {
            self.0.resize(t.index() + 1, 0);
        }
        self.0[t.index()] = v;
    }

    /// Pointwise maximum.
    pub fn join(&mut self, other: &VectorClock) {
        if self.0.len() < other.0.len() {
            self.0.resize(other.0.len(), 0);
        }
        for (a, b) in self.0.iter_mut().zip(&other.0) {
            *a = (*a).max(*b);
        }
    }

    /// Does the event `(t, k)` happen before (or is it) the event of this clock?
    pub fn covers(&self, t: ThreadId, k: u32) -> bool {
        self.get(t) > k
    }

    pub fn as_slice(&self) -> &[u32] {
        &self.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    #[test]
    fn join_and_covers() {
        let mut a = VectorClock::new(2);
        a.set(ThreadId(0), 3);
        let mut b = VectorClock::new(3);
        b.set(ThreadId(2), 5);
        a.join(&b);
        assert_eq!(a.as_slice(), &[3, 0, 5]);
        assert!(a.covers(ThreadId(0), 2) && !a.covers(ThreadId(0), 3) && !a.covers(ThreadId(1), 0));
    }
}
