//! What each thread of the program keeps for itself (DESIGN §3): its logical id, its event
//! counter `k`, and the accesses it has announced in `__irs_before` and not yet completed.

use shared_proto::ThreadId;
use std::cell::Cell;

/// An access between its `before` and `after` callbacks.
#[derive(Clone, Copy, Debug, Default)]
pub struct Pending {
    pub site: u64,
    pub addr: u64,
    pub info: u32,
}

/// At most this many accesses are open at once (a memcpy opens two).
pub const MAX_PENDING: usize = 4;

pub struct ThreadState {
    tid: Cell<Option<ThreadId>>,
    k: Cell<u32>,
    exited: Cell<bool>,
    pending: Cell<[Pending; MAX_PENDING]>,
    depth: Cell<usize>,
}

thread_local! {
    static STATE: ThreadState = const {
        ThreadState {
            tid: Cell::new(None),
            k: Cell::new(0),
            exited: Cell::new(false),
            pending: Cell::new([Pending { site: 0, addr: 0, info: 0 }; MAX_PENDING]),
            depth: Cell::new(0),
        }
    };
}

pub fn register(tid: ThreadId) {
    STATE.with(|s| {
        s.tid.set(Some(tid));
        s.k.set(0);
        s.exited.set(false);
    });
}

pub fn current() -> Option<ThreadId> {
    STATE.try_with(|s| s.tid.get()).ok().flatten()
}

/// The next event's `k`, counting it.
pub fn next_k() -> u32 {
    STATE.with(|s| {
        let k = s.k.get();
        s.k.set(k + 1);
        k
    })
}

/// Mark the thread exited; `true` the first time.
pub fn mark_exited() -> bool {
    STATE.try_with(|s| !s.exited.replace(true)).unwrap_or(false)
}

/// Open an access; returns the depth before it (0: the first open access).
pub fn push_pending(p: Pending) -> Option<usize> {
    STATE.with(|s| {
        let d = s.depth.get();
        if d >= MAX_PENDING {
            return None;
        }
        let mut a = s.pending.get();
        a[d] = p;
        s.pending.set(a);
        s.depth.set(d + 1);
        Some(d)
    })
}

/// Close the open access of `site` (the innermost such); returns it and the depth left.
pub fn pop_pending(site: u64) -> Option<(Pending, usize)> {
    STATE.with(|s| {
        let d = s.depth.get();
        let mut a = s.pending.get();
        let i = (0..d).rev().find(|&i| a[i].site == site)?;
        let p = a[i];
        a.copy_within(i + 1..d, i);
        s.pending.set(a);
        s.depth.set(d - 1);
        Some((p, d - 1))
    })
}
