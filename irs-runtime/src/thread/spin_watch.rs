//! Spin-waits end (DESIGN §7; the spin-assume of GenMC and Nidhugg): in EXPLORE, an iteration of a
//! watched loop (the pass's `spin_loops`: nothing in it changes the thread's state unseen) that
//! writes nothing and returns to the loop's header has left the thread where it was before it: same
//! instruction, same registers (the header has no phi node), same memory but one iteration's
//! temporaries. Then:
//!
//! - if no other thread can make progress (each has finished, is blocked, or has itself just
//!   completed such an iteration with nothing it reads written since), the program hangs: a
//!   *livelock*, reported like a deadlock, with where each thread spins or waits;
//! - otherwise the execution ends there, *discarded* (as at a failed `__VERIFIER_assume`: the
//!   process's end, with the other threads killed where they stand). Nothing is lost: the
//!   iteration only read, and reads are seen by nobody, so every execution in which the thread
//!   goes on from here is an execution in which it goes on from before that iteration, with the
//!   iteration's reads left out; the exploration explores those (the end is dependent with
//!   every event of every other thread, and each read of the iteration with the writes to its
//!   word, so the orders that put other threads' moves first are explored). This is the
//!   spin-assume of GenMC and Nidhugg (`while (c);` read as `assume(!c)`), on iterations
//!   observed rather than on loops rewritten: an execution keeps only the iterations that leave
//!   the loop or change something.
//!
//! The decision is a function of the thread's own events (what it did since the header), so
//! the same schedule gives the same execution. Serialised runs (`serial`) watch the same loops
//! with the weaker test of the first version, an iteration that repeats the one before exactly,
//! to keep the turn away from a spinning thread (they cannot end a real run: a thread that only
//! spins, with nobody left to write, spins as the program would). The default policy (the first
//! execution, and the tail of every run after its requested schedule) runs a thread inside a
//! watched loop last, and of several such threads the one that has waited longest, so that the
//! verifier's first execution, on which published prefixes are anchored, is more often a
//! complete one (when it is not, the publisher anchors on one found by random search).
//!
//! This module is the watch itself, a leaf both modes use (`scheduler`, `serial`); the pass's
//! calls at a loop's header reach them through `loop_callbacks`. It must never decide anything
//! from outside the thread's own events.

use shared_proto::{AccessKind, EventKind};
use shared_proto::fx_hash::FxHashMap;

/// One read of an iteration: the instruction, the address, the value read, and the write count
/// when it read (not part of what makes two iterations the same).
#[derive(Clone, Copy, Debug)]
struct Read {
    site: u64,
    addr: u64,
    value: u64,
    at: u64,
}

impl PartialEq for Read {
    fn eq(&self, o: &Read) -> bool {
        (self.site, self.addr, self.value) == (o.site, o.addr, o.value)
    }
}

/// An iteration longer than this is not compared (it is not a spin-wait's).
const MAX_READS: usize = 64;

/// What a thread at a loop's header has just completed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Iteration {
    /// No iteration of this loop (it has just entered it).
    None,
    /// An iteration that wrote or did something else that changes state (or read too much).
    Impure,
    /// An iteration that only read.
    Pure,
}

/// Where one thread is in the loops it runs.
#[derive(Default)]
pub struct ThreadSpin {
    /// The watched loop the thread is in (its header's site), while in an iteration.
    current: Option<u64>,
    /// The iteration so far wrote nothing and did nothing else that changes state.
    pure: bool,
    reads: Vec<Read>,
    /// The previous iteration of `current`, when it was pure.
    previous: Option<Vec<Read>>,
    /// The write count when the current iteration began.
    began: u64,
    /// Iterations in a row of `current` that only read.
    pure_run: u32,
    /// The locks the current iteration took or released (see [`LockUse`]).
    locks: Vec<LockUse>,
    /// The locks the previous iteration (when it was pure) released for a while: another thread
    /// blocked on one of them could have taken it then.
    windows: Vec<u64>,
    /// The loop waits on a condition variable (the pass's wait loops).
    wait_loop: bool,
}

/// What an iteration did to one lock (a program's mutex, or an internal lock of a condition
/// variable's wait): an iteration that leaves every lock as it found it, with no other thread's
/// operation on it in between, changed nothing another thread could tell, like one that only
/// read (`while (!done) { unlock(m); lock(m); }`, a timed wait that times out and waits again).
#[derive(Clone, Copy, Debug)]
struct LockUse {
    addr: u64,
    /// Acquisitions minus releases.
    delta: i32,
    /// The lock's operations by anyone before the iteration's first one on it.
    before: u64,
    /// The iteration's own operations on it.
    own: u64,
    /// It released it at some point.
    released: bool,
}

/// The writes of the execution so far: a count, and for each 4-byte word the count at its last
/// write (to tell whether what a spinning thread reads has been written since).
#[derive(Default)]
pub struct Writes {
    pub(crate) count: u64,
    /// Made on the first write a watched loop could care about (a `const` empty value, for a
    /// static's initialiser): until some thread reaches a watched loop, no question about writes
    /// since an iteration began can be asked, so none is kept (a hash-map insert per write was
    /// the cost of the watch in programs without spin-waits). With it, how many writes each
    /// word has had (a lock's operations are its word's writes).
    pub(crate) last: Option<FxHashMap<u64, (u64, u64)>>,
}

impl Writes {
    pub fn wrote(&mut self, addr: u64, size: u32) {
        self.count += 1;
        let Some(map) = self.last.as_mut() else { return };
        let (first, last) = (addr / 4, (addr + size.max(1) as u64 - 1) / 4);
        for w in first..=last.min(first + 1024) {
            let e = map.entry(w).or_insert((0, 0));
            *e = (self.count, e.1 + 1);
        }
    }

    /// The count at the last write of the word at `addr`, and how many writes it has had, since
    /// writes are kept.
    fn of_word(&self, addr: u64) -> (u64, u64) {
        self.last.as_ref().and_then(|m| m.get(&(addr / 4))).copied().unwrap_or((0, 0))
    }

    /// How many writes the word at `addr` has had since writes are kept.
    fn writes_to(&self, addr: u64) -> u64 {
        self.of_word(addr).1
    }

    /// Has any word of these reads been written after it was read (so that reading it again
    /// could give another value)?
    fn written_after(&self, reads: &[Read]) -> bool {
        let Some(map) = &self.last else { return false };
        reads.iter().any(|r| map.get(&(r.addr / 4)).is_some_and(|&(c, _)| c > r.at))
    }
}

/// The value an access of `size` bytes at `addr` finds now (a hash of it when longer than 8).
fn value_at(addr: u64, size: u32) -> u64 {
    // SAFETY: the program has just loaded these bytes (one fiber runs at a time, so nothing has
    // changed them since); volatile reads of memory the program can read.
    unsafe {
        match size {
            1 => std::ptr::read_volatile(addr as *const u8) as u64,
            2 => std::ptr::read_unaligned(addr as *const u16) as u64,
            4 => std::ptr::read_unaligned(addr as *const u32) as u64,
            8 => std::ptr::read_unaligned(addr as *const u64),
            n => {
                let bytes = std::slice::from_raw_parts(addr as *const u8, n.min(4096) as usize);
                shared_proto::hash::stable_hash(bytes)
            }
        }
    }
}

impl ThreadSpin {
    /// The thread enters a watched loop from outside: nothing before counts.
    pub fn enter(&mut self) {
        *self = ThreadSpin::default();
    }

    /// The loop it is at the header of waits on a condition variable: a thread there blocks in
    /// the wait until signalled (or times out), so the default policy does not run it last as a
    /// spinning thread (its order of events, on which prefixes are anchored, stays the program's:
    /// a pool's workers start their jobs before `main`, which slept, counts them).
    pub fn in_wait_loop(&mut self) {
        self.wait_loop = true;
    }

    /// The thread is at the top of the header of loop `site`: what the iteration it just
    /// completed (if any) was.
    pub fn head(&mut self, site: u64, writes: &mut Writes) -> Iteration {
        // From now on writes are kept (see `Writes::last`).
        writes.last.get_or_insert_with(FxHashMap::default);
        let mut done = Iteration::None;
        // Every lock left as found, and touched by nobody else meanwhile.
        let locks_kept = self.locks.iter().all(|l| l.delta == 0 && writes.writes_to(l.addr) == l.before + l.own);
        if self.current == Some(site) && self.pure && locks_kept && self.reads.len() + self.locks.len() <= MAX_READS {
            done = Iteration::Pure;
            self.pure_run += 1;
            // A lock counts as a read of it, at its last operation (the iteration's own): a
            // failed trylock of it is covered by that, and another thread's operation on it
            // after that is a write the iteration would see.
            let mut reads = std::mem::take(&mut self.reads);
            reads.retain(|r| !self.locks.iter().any(|l| l.addr / 4 == r.addr / 4));
            reads.extend(self.locks.iter().map(|l| Read { site: 0, addr: l.addr, value: 0, at: writes.of_word(l.addr).0 }));
            self.previous = Some(reads);
            self.windows = self.locks.iter().filter(|l| l.released).map(|l| l.addr).collect();
        } else {
            if self.current == Some(site) {
                done = Iteration::Impure;
            }
            self.previous = None;
            self.windows.clear();
            self.pure_run = 0;
        }
        self.current = Some(site);
        self.pure = true;
        self.reads.clear();
        self.locks.clear();
        self.began = writes.count;
        done
    }

    /// In a watched loop, in an iteration that has changed nothing so far: since which write
    /// count. (Until the thread's next write after it leaves the loop: the pass marks no exit.)
    pub fn waiting_since(&self) -> Option<u64> {
        // An iteration that took or released a lock (a wait on a condition variable, say) is
        // not known to have changed nothing until it is back at the header.
        (self.current.is_some() && self.pure && self.locks.is_empty() && !self.wait_loop).then_some(self.began)
    }

    /// The thread performed an operation (after `Writes::wrote` counted it): a read is
    /// remembered, so is what it did to a lock (see [`LockUse`]); anything else makes the
    /// iteration impure (a failed trylock changes nothing, like a read).
    pub fn observe(&mut self, kind: EventKind, site: Option<u64>, addr: u64, size: u32, writes: &Writes) {
        let at = writes.count;
        if self.current.is_none() || !self.pure {
            return;
        }
        if let EventKind::Lock | EventKind::TryLock | EventKind::Unlock = kind {
            let delta = if kind == EventKind::Unlock { -1 } else { 1 };
            match self.locks.iter_mut().find(|l| l.addr == addr) {
                Some(l) => {
                    l.delta += delta;
                    l.own += 1;
                    l.released |= kind == EventKind::Unlock;
                }
                None => {
                    if self.locks.len() < MAX_READS {
                        self.locks.push(LockUse { addr, delta, before: writes.writes_to(addr).saturating_sub(1), own: 1, released: kind == EventKind::Unlock });
                    } else {
                        self.pure = false;
                    }
                }
            }
            return;
        }
        let read = match kind {
            EventKind::Access(AccessKind::Load | AccessKind::AtomicLoad) => Read { site: site.unwrap_or(0), addr, value: value_at(addr, size), at },
            EventKind::TryLockFail => Read { site: site.unwrap_or(0), addr, value: 0, at },
            _ => {
                self.pure = false;
                return;
            }
        };
        if self.reads.len() > MAX_READS {
            self.pure = false;
        } else {
            self.reads.push(read);
        }
    }

    /// Would the thread, left to run, only repeat its last iteration? Its last iteration was
    /// pure, the current one is pure and has read so far what that one read (a read that
    /// differed would have taken it elsewhere, out of the loop say), and nothing the last
    /// iteration read has been written after it read it.
    pub fn spinning(&self, writes: &Writes) -> bool {
        self.pure && self.previous.as_ref().is_some_and(|p| p.starts_with(&self.reads) && !writes.written_after(p))
    }


    /// After an iteration that only read (which is `previous` now): has no word it read been
    /// written after it read it? Then the iteration would read the same again. (The thread has
    /// halted since: only the others' writes count.)
    pub fn unwritten_since_last(&self, writes: &Writes) -> bool {
        self.previous.as_ref().is_some_and(|p| !writes.written_after(p))
    }

    /// Did its last iteration (a pure one) release the lock `addr` for a while? A thread
    /// blocked on it could have taken it there, which the exploration explores (the lock's
    /// operations are dependent): the spinner does not hang it.
    pub fn releases(&self, addr: u64) -> bool {
        self.windows.contains(&addr)
    }

    /// How many iterations in a row of the loop it is in only read (`--spin-bound`).
    pub fn pure_run(&self) -> u32 {
        self.pure_run
    }

    /// The loop it spins in, for reports.
    pub fn loop_site(&self) -> Option<u64> {
        self.current
    }
}

/// `irs verify --spin-bound K` (0: none, the default): in EXPLORE, a watched loop may iterate K
/// times in a row without changing anything; the next such iteration discards the execution.
/// Relaxed: set once by `prepare`, before the first execution.
static BOUND: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);

/// Read `--spin-bound` (EXPLORE, before the first execution).
pub fn prepare() {
    let k = std::env::var(shared_proto::explore_protocol::ENV_SPIN_BOUND).ok().and_then(|v| v.trim().parse().ok()).unwrap_or(0);
    BOUND.store(k, std::sync::atomic::Ordering::Relaxed);
}

/// The bound of `--spin-bound`, if one was given.
pub fn bound() -> Option<u32> {
    Some(BOUND.load(std::sync::atomic::Ordering::Relaxed)).filter(|&k| k > 0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_iteration_that_only_reads_is_found_and_a_write_breaks_it() {
        let x = 0u32;
        let a = &x as *const u32 as u64;
        let mut w = Writes::default();
        let mut t = ThreadSpin::default();
        t.enter();
        assert_eq!(t.head(7, &mut w), Iteration::None);
        assert_eq!(t.waiting_since(), Some(0));
        t.observe(EventKind::Access(AccessKind::Load), Some(1), a, 4, &w);
        assert_eq!(t.head(7, &mut w), Iteration::Pure, "an iteration that only read");
        assert!(t.spinning(&w) && t.unwritten_since_last(&w));
        t.observe(EventKind::Access(AccessKind::Load), Some(1), a, 4, &w);
        assert_eq!(t.head(7, &mut w), Iteration::Pure, "the second iteration too");
        assert!(t.spinning(&w), "and nothing it read was written after it read it");
        // A write by another thread to the word: not spinning any more.
        w.wrote(a, 4);
        assert!(!t.spinning(&w) && !t.unwritten_since_last(&w));
        // An iteration with a write is not pure.
        t.observe(EventKind::Access(AccessKind::Store), Some(2), a, 4, &w);
        assert_eq!(t.waiting_since(), None);
        assert_eq!(t.head(7, &mut w), Iteration::Impure);
        assert_eq!(t.head(7, &mut w), Iteration::Pure, "after an impure one, a pure one again");
        // Entering from outside forgets the iterations before.
        t.enter();
        assert_eq!(t.head(7, &mut w), Iteration::None);
        assert_eq!(t.head(8, &mut w), Iteration::None, "another loop's header");
    }

    #[test]
    fn a_lock_left_as_found_and_touched_by_nobody_else_is_a_read() {
        let (flag, m) = (0u32, 0x1000u64);
        let a = &flag as *const u32 as u64;
        let mut w = Writes::default();
        let mut t = ThreadSpin::default();
        let lock_op = |t: &mut ThreadSpin, w: &mut Writes, kind: EventKind| {
            w.wrote(m, 1);
            t.observe(kind, Some(3), m, 1, w);
        };
        t.enter();
        t.head(7, &mut w);
        // `while (!flag) { unlock(m); lock(m); }`, holding m at the header.
        t.observe(EventKind::Access(AccessKind::Load), Some(1), a, 4, &w);
        lock_op(&mut t, &mut w, EventKind::Unlock);
        lock_op(&mut t, &mut w, EventKind::Lock);
        assert_eq!(t.head(7, &mut w), Iteration::Pure, "unlocked and locked again, nobody else in between");
        assert!(t.releases(m) && t.unwritten_since_last(&w));
        // Another thread takes m in the window: the iteration is not pure.
        t.observe(EventKind::Access(AccessKind::Load), Some(1), a, 4, &w);
        lock_op(&mut t, &mut w, EventKind::Unlock);
        w.wrote(m, 1);
        w.wrote(m, 1);
        lock_op(&mut t, &mut w, EventKind::Lock);
        assert_eq!(t.head(7, &mut w), Iteration::Impure, "another thread's lock and unlock of m in between");
        // Left held: not pure either.
        lock_op(&mut t, &mut w, EventKind::Unlock);
        assert_eq!(t.head(7, &mut w), Iteration::Impure, "m released and not taken again");
        // A pure one again; then another thread's operation on m after it counts as a write.
        lock_op(&mut t, &mut w, EventKind::Lock);
        lock_op(&mut t, &mut w, EventKind::Unlock);
        assert_eq!(t.head(7, &mut w), Iteration::Pure);
        assert!(t.unwritten_since_last(&w));
        w.wrote(m, 1);
        assert!(!t.unwritten_since_last(&w), "another thread's operation on m after the iteration");
    }
}
