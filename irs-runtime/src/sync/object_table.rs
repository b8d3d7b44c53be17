//! A map from a name (a nonzero `u64`: an internal object's name, a primitive's address) to
//! the runtime's state for it, which lookups of a present name read without taking a lock, and
//! from which a name is removed when its object is destroyed (`forget`). The runtime's
//! primitives look one up at every operation outside EXPLORE (internal locks, a condition
//! variable's waiters, an rwlock's holders, a semaphore's count); with a global mutex around
//! one hash table, an rwlock-heavy program under an empty prefix spent much of its time with
//! its threads queueing there (`benchmarks/results/irs_overhead/rwlock_relaxed.md`).
//!
//! Open addressing with linear probing over a fixed array. A slot is free (never used), holds a
//! name, or is a tombstone (its name was forgotten). Inserting and forgetting take the table's
//! edit lock; a lookup probes without it and stops at its name or at a free slot (slots never
//! become free again, so a name is never past a free slot of its probe sequence). A name whose
//! probe sequence has neither a free slot nor a tombstone goes to a locked overflow table.
//!
//! The values live in the runtime's own pages (`mmap`; in EXPLORE, in the heap that the
//! process image restores after each execution), never in the program's heap: a
//! forgotten value goes to a free list and serves the next name, so the memory is bounded by
//! the most objects alive at once, and the program's allocation statistics (valgrind's allocs
//! and frees, `mallinfo`) are the plain build's. Values are never unmapped: a thread that still
//! holds one a moment after its object was destroyed (a waker's futex wake after the woken
//! thread destroyed the condition variable) touches memory that stays valid (type-stable
//! memory).
//!
//! Never: hand out one value for two live names, or free a value while its name is present.

use parking_lot::Mutex;
use shared_proto::fx_hash::{FxBuild, FxHashMap};
use std::hash::BuildHasher;
use std::sync::atomic::{AtomicPtr, AtomicU64, Ordering};

const SLOTS: usize = 1 << 12;
/// How far a lookup probes before it goes to the overflow table.
const PROBES: usize = SLOTS / 8;
/// A slot whose name was forgotten.
const TOMBSTONE: u64 = u64::MAX;
/// Values mapped at once when the free list is empty.
const CHUNK: usize = 64;

struct Slot<T: 'static> {
    /// The name, 0 while free, `TOMBSTONE` once forgotten.
    name: AtomicU64,
    /// Its value while the name is present (null otherwise).
    value: AtomicPtr<Node<T>>,
}

/// A value, and the next free one while it is on the free list.
#[repr(C)]
struct Node<T> {
    value: T,
    next_free: *mut Node<T>,
}

/// What the edit lock guards.
struct Edit<T: 'static> {
    overflow: Option<FxHashMap<u64, *mut Node<T>>>,
    free: *mut Node<T>,
}

pub struct ObjectTable<T: 'static> {
    slots: [Slot<T>; SLOTS],
    edit: Mutex<Edit<T>>,
}

// SAFETY: the raw pointers in `Edit` are the table's own nodes, touched only under its lock.
unsafe impl<T: Sync> Send for Edit<T> {}

impl<T: Default + Sync + 'static> ObjectTable<T> {
    pub const fn new() -> ObjectTable<T> {
        ObjectTable {
            slots: [const { Slot { name: AtomicU64::new(0), value: AtomicPtr::new(std::ptr::null_mut()) } }; SLOTS],
            edit: Mutex::new(Edit { overflow: None, free: std::ptr::null_mut() }),
        }
    }

    /// Where the table lies in memory, `(start, length)`: a table only the modes outside EXPLORE
    /// use is no part of what a persistent EXPLORE worker restores after each execution.
    pub fn region(&'static self) -> (usize, usize) {
        (self as *const Self as usize, std::mem::size_of::<Self>())
    }

    fn start(name: u64) -> usize {
        (FxBuild::default().hash_one(name) as usize) & (SLOTS - 1)
    }

    /// The value of `name`, made (`T::default()`) on first use.
    pub fn get(&'static self, name: u64) -> &'static T {
        debug_assert!(name != 0 && name != TOMBSTONE, "0 and !0 mark free and forgotten slots");
        let mut i = Self::start(name);
        for _ in 0..PROBES {
            let slot = &self.slots[i];
            // Acquire: a present name is read before its value (see `insert`).
            match slot.name.load(Ordering::Acquire) {
                k if k == name => {
                    // Acquire: pairs with the inserter's release store: the value's state is seen.
                    let p = slot.value.load(Ordering::Acquire);
                    // Acquire: still this name's once the value is read (a slot forgotten and
                    // taken by another name meanwhile is looked up again, under the lock).
                    if !p.is_null() && slot.name.load(Ordering::Acquire) == name {
                        // SAFETY: a node of this table: mapped for good (`Pool`).
                        return unsafe { &(*p).value };
                    }
                    break;
                }
                0 => break,
                _ => {}
            }
            i = (i + 1) & (SLOTS - 1);
        }
        self.insert(name)
    }

    /// `name`'s value, found or made under the edit lock.
    fn insert(&'static self, name: u64) -> &'static T {
        let mut edit = self.edit.lock();
        let mut i = Self::start(name);
        let mut open = None;
        for _ in 0..PROBES {
            let slot = &self.slots[i];
            // Relaxed: names change only under the edit lock, which we hold.
            match slot.name.load(Ordering::Relaxed) {
                k if k == name => {
                    let p = slot.value.load(Ordering::Relaxed);
                    // SAFETY: a node of this table, set before the name (under this lock).
                    return unsafe { &(*p).value };
                }
                0 => {
                    open.get_or_insert(i);
                    break;
                }
                TOMBSTONE => {
                    open.get_or_insert(i);
                }
                _ => {}
            }
            i = (i + 1) & (SLOTS - 1);
        }
        if let Some(&p) = edit.overflow.as_ref().and_then(|o| o.get(&name)) {
            // SAFETY: a node of this table.
            return unsafe { &(*p).value };
        }
        let node = take_node(&mut edit);
        match open {
            Some(i) => {
                let slot = &self.slots[i];
                // Release (both): the value's fresh state before the pointer, the pointer before
                // the name that makes lookups read it.
                slot.value.store(node, Ordering::Release);
                slot.name.store(name, Ordering::Release);
            }
            None => {
                edit.overflow.get_or_insert_with(FxHashMap::default).insert(name, node);
            }
        }
        // SAFETY: a node just taken for `name`.
        unsafe { &(*node).value }
    }

    /// Forget `name` (its object was destroyed): its value serves another name later, fresh.
    /// Nothing if it has none.
    pub fn forget(&'static self, name: u64) {
        let mut edit = self.edit.lock();
        let mut i = Self::start(name);
        for _ in 0..PROBES {
            let slot = &self.slots[i];
            // Relaxed: names change only under the edit lock, which we hold.
            match slot.name.load(Ordering::Relaxed) {
                k if k == name => {
                    let node = slot.value.swap(std::ptr::null_mut(), Ordering::Relaxed);
                    // Release: a lookup that reads the tombstone sees the pointer cleared.
                    slot.name.store(TOMBSTONE, Ordering::Release);
                    give_back(&mut edit, node);
                    return;
                }
                0 => break,
                _ => {}
            }
            i = (i + 1) & (SLOTS - 1);
        }
        let removed = edit.overflow.as_mut().and_then(|o| o.remove(&name));
        if edit.overflow.as_ref().is_some_and(|o| o.is_empty()) {
            // The program's heap holds nothing of the table once nothing overflows.
            edit.overflow = None;
        }
        if let Some(node) = removed {
            give_back(&mut edit, node);
        }
    }

    /// Did any name go to the overflow table?
    #[cfg(test)]
    fn overflowed(&self) -> bool {
        self.edit.lock().overflow.as_ref().is_some_and(|t| !t.is_empty())
    }
}

/// A fresh node: from the free list, or from a new chunk of pages.
fn take_node<T: Default>(edit: &mut Edit<T>) -> *mut Node<T> {
    if edit.free.is_null() {
        let chunk = map_chunk::<T>();
        for k in 0..CHUNK {
            // SAFETY: `k` is inside the chunk just mapped for `CHUNK` nodes.
            let n = unsafe { chunk.add(k) };
            // SAFETY: a node of the new chunk, ours alone; written before it is ever read.
            unsafe { std::ptr::write(n, Node { value: T::default(), next_free: edit.free }) };
            edit.free = n;
        }
    }
    let n = edit.free;
    // SAFETY: a node on the free list (fresh: `give_back`): no name holds it, and we hold the
    // edit lock.
    edit.free = unsafe { (*n).next_free };
    n
}

/// Put a forgotten node on the free list, fresh: its old state is dropped now (what it holds in
/// the heap, such as a waiter list, is freed with its object).
fn give_back<T: Default>(edit: &mut Edit<T>, node: *mut Node<T>) {
    // SAFETY: the node left its name under the edit lock, which we hold; only a late waker may
    // still touch it, with a futex wake that reads nothing (see the module doc).
    unsafe {
        (*node).value = T::default();
        (*node).next_free = edit.free;
    }
    edit.free = node;
}

/// `CHUNK` nodes of uninitialised memory, never freed: mapped for the runtime alone, or in
/// EXPLORE in the heap, which the worker's process image puts back after every execution (a
/// mapping made during an execution would outlive it, one more per execution).
fn map_chunk<T>() -> *mut Node<T> {
    let layout = std::alloc::Layout::array::<Node<T>>(CHUNK).expect("a chunk's size fits");
    if crate::mode::get() == crate::mode::Mode::Explore {
        // SAFETY: a layout of nonzero size.
        let p = unsafe { std::alloc::alloc(layout) };
        if p.is_null() {
            std::alloc::handle_alloc_error(layout);
        }
        return p as *mut Node<T>;
    }
    let bytes = layout.size();
    debug_assert!(std::mem::align_of::<Node<T>>() <= 4096, "pages are 4096-aligned");
    // SAFETY: an anonymous private mapping at an address the kernel chooses.
    let p = unsafe { libc::mmap(std::ptr::null_mut(), bytes, libc::PROT_READ | libc::PROT_WRITE, libc::MAP_PRIVATE | libc::MAP_ANONYMOUS, -1, 0) };
    if p == libc::MAP_FAILED {
        eprintln!("irs-runtime: out of memory for the state of the program's synchronisation objects");
        // SAFETY: abort has no preconditions; nothing can go on without the state.
        unsafe { libc::abort() };
    }
    p as *mut Node<T>
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::AtomicU32;

    #[test]
    fn every_thread_finds_one_value_per_name_even_beyond_the_table() {
        static TABLE: ObjectTable<AtomicU32> = ObjectTable::new();
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
        for &n in &names {
            TABLE.forget(n);
        }
        assert!(!TABLE.overflowed(), "forgotten names stayed in the overflow table");
    }

    #[test]
    fn forgotten_values_serve_new_names_fresh_and_memory_stays_bounded() {
        static TABLE: ObjectTable<AtomicU32> = ObjectTable::new();
        // Names come and go a hundred thousand times, at most 100 alive at once: the values
        // are the same few nodes over and over, each fresh for its new name.
        let mut seen = std::collections::HashSet::new();
        for round in 0..1000u64 {
            for k in 1..=100u64 {
                let v = TABLE.get(round * 1000 + k);
                assert_eq!(v.load(Ordering::Relaxed), 0, "a new name found an old value's state");
                v.store(7, Ordering::Relaxed);
                seen.insert(v as *const AtomicU32 as usize);
            }
            for k in 1..=100u64 {
                TABLE.forget(round * 1000 + k);
            }
        }
        assert!(seen.len() <= 2 * CHUNK, "{} values for at most 100 live names", seen.len());
        // A name forgotten and looked up again is fresh; one never made is forgotten quietly.
        TABLE.get(5).store(3, Ordering::Relaxed);
        TABLE.forget(5);
        TABLE.forget(5);
        TABLE.forget(123_456_789);
        assert_eq!(TABLE.get(5).load(Ordering::Relaxed), 0);
    }

    #[test]
    fn lookups_race_with_forgetting_other_names() {
        static TABLE: ObjectTable<AtomicU32> = ObjectTable::new();
        // One thread keeps names 1..=50 alive and checks their values never change under it;
        // another makes and forgets names that share their probe sequences.
        let keep: Vec<&'static AtomicU32> = (1..=50u64).map(|n| TABLE.get(n)).collect();
        for (i, v) in keep.iter().enumerate() {
            v.store(i as u32 + 1, Ordering::Relaxed);
        }
        std::thread::scope(|s| {
            s.spawn(|| {
                for r in 0..20_000u64 {
                    let n = 1_000 + (r % 300);
                    TABLE.get(n);
                    TABLE.forget(n);
                }
            });
            s.spawn(|| {
                for _ in 0..200 {
                    for n in 1..=50u64 {
                        let v = TABLE.get(n);
                        assert!(std::ptr::eq(v, keep[n as usize - 1]), "a live name moved");
                        assert_eq!(v.load(Ordering::Relaxed), n as u32);
                    }
                }
            });
        });
    }
}
