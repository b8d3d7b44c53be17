//! Memory as the scheduler names it (DESIGN §3, logical addresses; §7): the heap blocks each
//! logical thread allocated, the logical address of an address (by heap block, stack, or
//! statically; an internal object after its primitive), and accesses as visible operations.
//!
//! An allocation or a free is not a visible operation: [`allocated`] and [`freed`] must never
//! make a decision or record an event (they only name memory).

use super::decision::{done, grant_op};
use super::{with, Scheduler};
use shared_proto::{sync_object, AccessKind, EventKind, LogicalAddr, Region, SiteId, ThreadId};
use std::ffi::c_void;

impl Scheduler {
    /// Name `addr` by heap block or stack when it lies in one (DESIGN §3); an internal object of
    /// a primitive (`shared_proto::sync_object`) after the primitive's own logical address.
    pub(super) fn logical(&self, addr: u64) -> LogicalAddr {
        if let Some((base, tag)) = sync_object::decode(addr) {
            // A primitive in a freed block keeps the block's name, as a mutex does.
            let l = self.logical_mutex(base);
            return LogicalAddr { region: l.region, offset: sync_object::sub(l.offset, tag) };
        }
        if let Some((&base, &(size, thread, alloc))) = self.heap.range(..=addr).next_back() {
            if addr < base + size.max(1) {
                return LogicalAddr { region: Region::Heap { thread: ThreadId(thread), alloc }, offset: addr - base };
            }
        }
        for (t, th) in self.threads.iter().enumerate() {
            let (bottom, top) = th.stack;
            if bottom <= addr && addr < top {
                return LogicalAddr { region: Region::Stack { thread: ThreadId(t as u32) }, offset: top - addr };
            }
        }
        LogicalAddr { region: Region::Static, offset: addr }
    }
}

impl Scheduler {
    /// The logical address of the mutex (or other primitive) at `m`: one in a freed block keeps
    /// the block's name, so that an operation on it after the free is on the words the free
    /// wrote (and is the same action as before the free). Plain accesses to freed memory are
    /// not named so: memory the C library allocated for itself (`strdup`, `fopen`) is not in
    /// the heap map, and one of its blocks at a freed address would take the freed block's name.
    /// An object's name for people: the program's global it lies in (`b0`, `pool+16`), else its
    /// logical address (`heap[T0#1]+16`); the same in every execution, unlike a raw address.
    pub(super) fn object_name(&self, addr: u64) -> String {
        let l = self.logical_mutex(addr);
        match l.region {
            Region::Static => crate::program::program_info::global_name(addr).unwrap_or_else(|| l.to_string()),
            _ => l.to_string(),
        }
    }

    pub(super) fn logical_mutex(&self, m: u64) -> LogicalAddr {
        freed_block(self, m).map_or_else(|| self.logical(m), |(_, at)| at)
    }
}

/// A block the running thread allocated (not a visible operation: it only names memory).
pub fn allocated(p: *mut c_void, size: usize) {
    if p.is_null() {
        return;
    }
    with(|s| {
        let th = &mut s.threads[s.current];
        let alloc = th.allocs;
        th.allocs += 1;
        let thread = s.current as u32;
        s.heap.insert(p as u64, (size as u64, thread, alloc));
        // Freed blocks the new one overlaps are in use again.
        let (start, end) = (p as u64, p as u64 + (size as u64).max(1));
        s.freed.retain(|&b, f| b + f.size.max(1) <= start || end <= b);
    });
}

/// A heap block freed and not allocated again: its size, the thread that freed it, and its
/// name while it lived.
#[derive(Clone, Copy, Debug)]
pub(super) struct Freed {
    size: u64,
    pub by: u32,
    region: Region,
}

/// The block `addr` lies in, if it was freed and not allocated again, and `addr`'s logical
/// address in it while it lived (for reports: the same in every execution).
pub(super) fn freed_block(s: &Scheduler, addr: u64) -> Option<(Freed, LogicalAddr)> {
    let (&b, &f) = s.freed.range(..=addr).next_back()?;
    (addr < b + f.size.max(1)).then_some((f, LogicalAddr { region: f.region, offset: addr - b }))
}

pub fn freed(p: *mut c_void) {
    if !p.is_null() {
        // A mutex in the block (destroyed while locked, as glibc allows) is gone with it: a
        // later block at the same address holds other objects (named by their block, DESIGN §3).
        with(|s| {
            if let Some((size, thread, alloc)) = s.heap.remove(&(p as u64)) {
                let by = s.current as u32;
                s.freed.insert(p as u64, Freed { size, by, region: Region::Heap { thread: ThreadId(thread), alloc } });
                let range = p as u64..p as u64 + size.max(1);
                s.owners.retain(|(m, _)| !range.contains(m));
                s.recursion.retain(|(m, _)| !range.contains(m));
            }
        });
    }
}

pub fn access_before(site: u64, addr: u64, kind: AccessKind, size: u32) {
    let logical = with(|s| s.logical(addr));
    grant_op(EventKind::Access(kind), Some(SiteId(site)), addr, size, Some(logical));
}

pub fn access_after() {
    done();
}
