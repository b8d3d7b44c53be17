//! Rule 2 of ENFORCE, past the cut (DESIGN §4's prefix barrier weakened to what its guarantee
//! needs; docs/src/enforce.md, "Past the cut"): whether the window is closed (every thread has
//! completed its part of the cutoff in force), and, while it is open, the waits of an event past
//! its thread's cut that the prefix's object index can name: per other thread, the last prefix
//! event inside that thread's cut that the event depends on.

use super::{wait_for, Enforcer, Me};
use shared_proto::prefix_objects::{self, Key};
use std::sync::atomic::Ordering;

/// Has every thread completed its events of the cutoff in force?
pub(super) fn barrier_open(e: &Enforcer) -> bool {
    // Acquire: pairs with the release store below (what made it true is visible).
    if e.window_closed.load(Ordering::Acquire) {
        return true;
    }
    // Acquire: pairs with the release store in `with_cut` (the slot was validated before).
    let slot = e.adopted.load(Ordering::Acquire);
    let open = (0..e.counters.len()).all(|u| e.counters[u].done.load(Ordering::Acquire) >= e.view.cutoff_entry(slot, u));
    if open {
        // Release: see the load above.
        e.window_closed.store(true, Ordering::Release);
    }
    open
}

/// What an event past its thread's cut touches, where the prefix's object index can name it.
#[derive(Clone, Copy, Debug)]
pub enum Touch {
    /// A memory access of `size` bytes at `addr`.
    Access { addr: u64, size: u64, writes: bool },
    /// An operation on the program mutex at this address.
    Mutex(u64),
    /// The calling thread's exit (its thread's object: only a kill of it can be pending then).
    Exit,
}

/// The most threads rule 2's waits track for one event (more: it waits at the barrier).
const WINDOW_THREADS: usize = 64;

/// Rule 2 for an event the index names: wait for the last prefix event of each other thread
/// that it depends on. `None` when it cannot be named (no index, or an access too wide): the
/// caller waits at the barrier; `Some(false)` when a new cutoff was published meanwhile.
pub(super) fn conflict_waits(e: &Enforcer, me: &Me, t: u32, k: u32, touch: Touch) -> Option<bool> {
    let index = e.objects?;
    let mut need = [(0u32, 0u32); WINDOW_THREADS];
    let mut n = 0usize;
    let mut overflow = false;
    let mut add = |u: u32, j: u32| match need[..n].iter_mut().find(|x| x.0 == u) {
        Some(x) => x.1 = x.1.max(j + 1),
        None if n < WINDOW_THREADS => {
            need[n] = (u, j + 1);
            n += 1;
        }
        None => overflow = true,
    };
    // The cutoff in force, read without a lock (possibly one adopted since this thread's
    // `my_cut`: smaller, so fewer waits, and the run contains it too).
    // Acquire: pairs with the release store in `with_cut` (the slot was validated before).
    let slot = e.adopted.load(Ordering::Acquire);
    let cut = |u: u32| if (u as usize) < e.counters.len() { e.view.cutoff_entry(slot, u as usize) } else { 0 };
    match touch {
        Touch::Access { addr, size, writes } => {
            let keys = prefix_objects::access_keys(addr, size, writes, e.image)?;
            for (key, writes) in keys {
                prefix_objects::conflicts(&index, key, writes, t, cut, &mut add);
            }
        }
        Touch::Mutex(m) => {
            for (key, writes) in prefix_objects::mutex_op_keys(m, e.image) {
                prefix_objects::conflicts(&index, key, writes, t, cut, &mut add);
            }
        }
        Touch::Exit => {}
    }
    // Every event of the thread depends on a kill of it (DESIGN §3's process end).
    prefix_objects::conflicts(&index, Key::Thread(t), true, t, cut, &mut add);
    if overflow {
        return None;
    }
    for &(u, c) in &need[..n] {
        if !wait_for(e, me, u, c, (t, k)) {
            return Some(false);
        }
    }
    Some(true)
}
