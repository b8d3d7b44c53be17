//! An insert-only map from a name (a nonzero `u64`: an internal object's name, a primitive's
//! address) to a value that lives as long as the process, which lookups read without taking a
//! lock. The runtime's primitives look one up at every operation outside EXPLORE (issue 20:
//! internal locks, an rwlock's holders); with a global mutex around one hash table, an
//! rwlock-heavy program under an empty prefix spent much of its time with its threads queueing
//! there (`benchmarks/results/irs_overhead/rwlock_relaxed.md`).
//!
//! Open addressing with linear probing over a fixed array: a slot goes from free to claimed by
//! one name once, and never back, so a lookup that finds its name is done, and one that finds a
//! free slot claims it (one claimer wins; the others see the winner's name). Names whose probe
//! sequence is full go to a locked overflow table, consistently: slots never free up.

use parking_lot::Mutex;
use shared_proto::fx_hash::{FxBuild, FxHashMap};
use std::hash::BuildHasher;
use std::sync::atomic::{AtomicPtr, AtomicU64, Ordering};

const SLOTS: usize = 1 << 12;
/// How far a lookup probes before it goes to the overflow table.
const PROBES: usize = SLOTS / 8;

struct Slot<T: 'static> {
    /// The name, or 0 while free.
    name: AtomicU64,
    /// Its value, set once by the thread that claimed the slot, right after claiming it.
    value: AtomicPtr<T>,
}

pub struct LeakedTable<T: 'static> {
    slots: [Slot<T>; SLOTS],
    overflow: Mutex<Option<FxHashMap<u64, &'static T>>>,
}

impl<T: Default + Sync + 'static> LeakedTable<T> {
    pub const fn new() -> LeakedTable<T> {
        LeakedTable { slots: [const { Slot { name: AtomicU64::new(0), value: AtomicPtr::new(std::ptr::null_mut()) } }; SLOTS], overflow: Mutex::new(None) }
    }

    /// The value of `name`, made (`T::default()`) on first use.
    pub fn get(&'static self, name: u64) -> &'static T {
        debug_assert!(name != 0, "0 marks a free slot");
        let mut i = (FxBuild::default().hash_one(name) as usize) & (SLOTS - 1);
        for _ in 0..PROBES {
            let slot = &self.slots[i];
            // Acquire: a claimed slot's name is read before its value (see `published`).
            let k = slot.name.load(Ordering::Acquire);
            if k == name {
                return published(slot);
            }
            if k == 0 {
                // AcqRel: claim the slot; failing, read who did (Acquire), as above.
                match slot.name.compare_exchange(0, name, Ordering::AcqRel, Ordering::Acquire) {
                    Ok(_) => {
                        let v: &'static T = Box::leak(Box::default());
                        // Release: the value's initial state before the pointer that publishes it.
                        slot.value.store(v as *const T as *mut T, Ordering::Release);
                        return v;
                    }
                    Err(other) if other == name => return published(slot),
                    Err(_) => {}
                }
            }
            i = (i + 1) & (SLOTS - 1);
        }
        let mut t = self.overflow.lock();
        *t.get_or_insert_with(FxHashMap::default).entry(name).or_insert_with(|| Box::leak(Box::default()))
    }

    /// Did any name go to the overflow table?
    #[cfg(test)]
    fn overflowed(&self) -> bool {
        self.overflow.lock().as_ref().is_some_and(|t| !t.is_empty())
    }
}

/// The value published in `slot`, once its claimer has set it (a few instructions after the
/// claim).
fn published<T>(slot: &Slot<T>) -> &'static T {
    loop {
        // Acquire: pairs with the claimer's release store, so the value's initial state is seen.
        let p = slot.value.load(Ordering::Acquire);
        if !p.is_null() {
            // SAFETY: a leaked `Box<T>` (`LeakedTable::get`), never freed.
            return unsafe { &*p };
        }
        std::hint::spin_loop();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::AtomicU32;

    #[test]
    fn every_thread_finds_one_value_per_name_even_beyond_the_table() {
        static TABLE: LeakedTable<AtomicU32> = LeakedTable::new();
        // More names than the lock-free part holds, looked up by four threads at once in
        // different orders: one value per name, the same for every thread.
        let names: Vec<u64> = (1..=(SLOTS as u64 + 2000)).collect();
        let found: Vec<Vec<usize>> = std::thread::scope(|s| {
            let hs: Vec<_> = (0..4)
                .map(|t| {
                    let names = &names;
                    s.spawn(move || {
                        let mut order: Vec<usize> = (0..names.len()).collect();
                        if t % 2 == 1 {
                            order.reverse();
                        }
                        let mut got = vec![0usize; names.len()];
                        for i in order {
                            let v = TABLE.get(names[i]);
                            v.fetch_add(1, Ordering::Relaxed);
                            got[i] = v as *const AtomicU32 as usize;
                        }
                        got
                    })
                })
                .collect();
            hs.into_iter().map(|h| h.join().unwrap()).collect()
        });
        assert!(found.iter().all(|f| f == &found[0]), "threads found different values for a name");
        let mut distinct = found[0].clone();
        distinct.sort_unstable();
        distinct.dedup();
        assert_eq!(distinct.len(), names.len(), "two names share a value");
        assert!(names.iter().all(|&n| TABLE.get(n).load(Ordering::Relaxed) == 4), "an update was lost");
        assert!(TABLE.overflowed(), "the table never overflowed");
    }
}
