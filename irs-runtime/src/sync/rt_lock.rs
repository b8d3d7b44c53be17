//! The runtime's own locks for the internal objects of condition variables, semaphores,
//! barriers, rwlocks and `pthread_once` outside EXPLORE (DESIGN §3; `shared_proto::sync_object`).
//! Unlike a `pthread_mutex_t`, any thread may release one: a gate is taken by its waiter and
//! released by the thread that wakes it. A futex word: 0 free, 1 held, 2 held with sleepers.
//!
//! Locks are found by the internal object's name (an address with the tag in its high bits) in
//! an `object_table`, and forgotten when their primitive is destroyed (a condition variable's
//! gate outside EXPLORE: when its thread ends).

use crate::sync::object_table::ObjectTable;
use crossbeam_utils::CachePadded;
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::{Duration, Instant};

/// A cache line each: the locks of an rwlock's reader slots are taken by different threads at
/// once, and locks made one after the other would otherwise share a line.
#[derive(Default)]
pub struct RtLock {
    state: CachePadded<AtomicU32>,
}

impl RtLock {
    /// Take it if it is free.
    pub fn try_acquire(&self) -> bool {
        // Acquire: what the last holder did before releasing happens before what we do now.
        self.state.compare_exchange(0, 1, Ordering::Acquire, Ordering::Relaxed).is_ok()
    }

    /// Take it, waiting as long as it takes.
    pub fn acquire(&self) {
        self.acquire_within(None);
    }

    /// Take it, waiting at most `limit` (`None`: for good). Returns whether it was taken.
    pub fn acquire_within(&self, limit: Option<Duration>) -> bool {
        if self.try_acquire() {
            return true;
        }
        let until = limit.map(|l| Instant::now() + l);
        loop {
            // Mark it as having sleepers; if it was free meanwhile, it is ours (held, with
            // sleepers assumed: one wake too many at the release is harmless).
            // Acquire: as in `try_acquire`.
            if self.state.swap(2, Ordering::Acquire) == 0 {
                return true;
            }
            let left = match until {
                None => Duration::from_millis(100),
                Some(u) => match u.checked_duration_since(Instant::now()) {
                    Some(d) if !d.is_zero() => d.min(Duration::from_millis(100)),
                    _ => return false,
                },
            };
            crate::sync::futex::wait(&self.state, 2, left);
        }
    }

    /// Release it (whoever took it).
    pub fn release(&self) {
        // Release: pairs with the acquiring swap or exchange of the next holder.
        if self.state.swap(0, Ordering::Release) == 2 {
            crate::sync::futex::wake_all(&self.state);
        }
    }
}

/// Used outside EXPLORE only (`super::outside_explore_tables`).
pub(super) static LOCKS: ObjectTable<RtLock> = ObjectTable::new();

/// The lock of the internal object `name` (made free on first use).
pub fn of(name: u64) -> &'static RtLock {
    debug_assert!(!crate::mode::explore(), "a runtime lock in EXPLORE (not restored between executions)");
    LOCKS.get(name)
}

/// The internal object `name` is gone (its primitive destroyed, its thread ended): its lock
/// serves another name later, free.
pub fn forget(name: u64) {
    LOCKS.forget(name)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_lock_is_released_by_another_thread_and_times_out() {
        let l = of(0x8000_0000_0000_1234);
        assert!(l.try_acquire() && !l.try_acquire());
        assert!(!l.acquire_within(Some(Duration::from_millis(20))));
        let t = std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(20));
            of(0x8000_0000_0000_1234).release();
        });
        l.acquire();
        t.join().unwrap();
        l.release();
        assert!(std::ptr::eq(l, of(0x8000_0000_0000_1234)));
    }
}
