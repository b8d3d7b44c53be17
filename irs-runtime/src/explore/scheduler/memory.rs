//! Memory as the scheduler names it (DESIGN §3, logical addresses; §7): the heap blocks each
//! logical thread allocated, the logical address of an address (by heap block, stack, or
//! statically; an internal object after its primitive), and accesses as visible operations.
//!
//! An allocation or a free is not a visible operation: [`allocated`] and [`freed`] must never
//! make a decision or record an event (they only name memory; the free's event is the
//! caller's).
//!
//! Freed memory: a block of the program's heap that is freed stays allocated in the C library
//! for the rest of the execution (up to [`QUARANTINE_BYTES`]), so that no later allocation, the
//! C library's own included, can lie where it was; an access to it, a free of it again, or an
//! operation on a mutex in it is then what it is, a use after free, and ends the execution as a
//! violation (after its event, which the free's event is dependent with). Each execution is a
//! process of its own: what it keeps is gone with it.

use super::decision::{done, grant_valued};
use super::update_check;
use super::{with, Scheduler};
use shared_proto::value_model::{of_size, raw, Operand, Valued, Value};
use shared_proto::{abi, sync_object, AccessKind, EventKind, LogicalAddr, Region, SiteId, ThreadId, ViolationKind};
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
        self.in_heap_or_stack(addr).unwrap_or(LogicalAddr { region: Region::Static, offset: addr })
    }

    /// `addr`'s name by the live heap block or the stack it lies in, if it lies in one.
    fn in_heap_or_stack(&self, addr: u64) -> Option<LogicalAddr> {
        if let Some((&base, &(size, thread, alloc))) = self.heap.range(..=addr).next_back() {
            if addr < base + size.max(1) {
                return Some(LogicalAddr { region: Region::Heap { thread: ThreadId(thread), alloc }, offset: addr - base });
            }
        }
        for (t, th) in self.threads.iter().enumerate() {
            let (bottom, top) = th.stack;
            if bottom <= addr && addr < top {
                return Some(LogicalAddr { region: Region::Stack { thread: ThreadId(t as u32) }, offset: top - addr });
            }
        }
        None
    }

    /// The `size`-byte value `v` as the value model compares it (`shared_proto::value_model`):
    /// a pointer into a heap block (freed or not) or a stack by its logical address, the same in
    /// every execution; anything else raw.
    fn value(&self, v: u64, size: u32) -> Value {
        // Small numbers (NULL, counts, flags) are no address of a heap block or a stack.
        if size == 8 && v >= 1 << 16 {
            if let Some(at) = freed_block(self, v).map(|(_, at)| at).or_else(|| self.in_heap_or_stack(v)) {
                return at;
            }
        }
        raw(of_size(v, size))
    }

    /// The operand of an access the pass gave values for (`abi::CB_BEFORE_STORE`,
    /// `abi::CB_BEFORE_UPDATE`), as the value model takes it; `None` for an update it does not
    /// model.
    fn operand(&self, kind: AccessKind, size: u32, given: RawOperand) -> Option<Valued> {
        let v = |x| self.value(x, size);
        let operand = match (kind, given) {
            (AccessKind::Store | AccessKind::AtomicStore, RawOperand::Store(x)) => Operand::Store(v(x)),
            (AccessKind::CmpXchg, RawOperand::Update(e, d)) => Operand::Cas { expected: v(e), desired: v(d) },
            (AccessKind::Rmw, RawOperand::Update(x, abi::RMW_XCHG)) => Operand::Xchg(v(x)),
            (AccessKind::Rmw, RawOperand::Update(x, abi::RMW_ADD)) => Operand::Add(of_size(x, size)),
            (AccessKind::Rmw, RawOperand::Update(x, abi::RMW_SUB)) => Operand::Sub(of_size(x, size)),
            _ => return None,
        };
        Some(Valued { operand, changed: false })
    }
}

/// An access's operands as the pass gave them: a store's value; a cmpxchg's expected and
/// desired values, or an atomicrmw's operand and `abi::RMW_*` code.
#[derive(Clone, Copy, Debug)]
pub enum RawOperand {
    Store(u64),
    Update(u64, u64),
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

/// How many bytes of freed blocks an execution keeps from the C library at most; beyond, the
/// oldest go back to it (and a use of one of those is no longer told from a use of what the C
/// library puts there next).
pub const QUARANTINE_BYTES: u64 = 64 << 20;

/// What the caller of [`freed`] does with the block after the free's event.
#[derive(Debug, PartialEq, Eq)]
pub enum Release {
    /// Nothing: the execution keeps it (quarantined).
    Keep,
    /// Free it in the C library: not a block of the program's heap (the C library's own,
    /// `strdup`'s, say) or none at all.
    Forward,
    /// It was freed before: a double free, reported so (after the event).
    Again(String),
}

/// The running thread frees the block `p` (its event made by the caller).
pub fn freed(p: *mut c_void) -> Release {
    if p.is_null() {
        return Release::Forward;
    }
    with(|s| {
        let a = p as u64;
        let Some((size, thread, alloc)) = s.heap.remove(&a) else {
            return match s.freed.get(&a) {
                Some(f) => Release::Again(after_free(s.current as u32, AccessKind::Free, LogicalAddr { region: f.region, offset: 0 }, f.by)),
                None => Release::Forward,
            };
        };
        // A mutex in the block (destroyed while locked, as glibc allows) is gone with it.
        let by = s.current as u32;
        s.freed.insert(a, Freed { size, by, region: Region::Heap { thread: ThreadId(thread), alloc } });
        let range = a..a + size.max(1);
        s.owners.retain(|(m, _)| !range.contains(m));
        s.recursion.retain(|(m, _)| !range.contains(m));
        s.quarantine.push_back(a);
        s.quarantined += size;
        while s.quarantined > QUARANTINE_BYTES {
            let Some(old) = s.quarantine.pop_front() else { break };
            if let Some(f) = s.freed.remove(&old) {
                s.quarantined -= f.size;
            }
            // SAFETY: a block of the C library's allocator that the program freed and the
            // execution kept; nothing refers to it any more but the program's stale pointers.
            unsafe { libc::free(old as *mut c_void) };
        }
        Release::Keep
    })
}

/// The size the program asked for of the block of its heap at `p` (live, or freed and kept:
/// freed again, a double free), if `p` starts one.
pub fn block_size(p: *mut c_void) -> Option<u64> {
    let a = p as u64;
    with(|s| s.heap.get(&a).map(|&(size, _, _)| size).or_else(|| s.freed.get(&a).map(|f| f.size)))
}

/// Is `p` the start of a live block of the program's heap (one [`freed`] would keep)?
pub fn is_heap_block(p: *mut c_void) -> bool {
    with(|s| s.heap.contains_key(&(p as u64)))
}

/// The freed block `[addr, addr + size)` overlaps, if any, and `addr`'s logical address by it.
fn freed_overlap(s: &Scheduler, addr: u64, size: u32) -> Option<(Freed, LogicalAddr)> {
    let end = addr.saturating_add((size as u64).max(1));
    let (&b, &f) = s.freed.range(..end).next_back()?;
    (addr < b + f.size.max(1)).then_some((f, LogicalAddr { region: f.region, offset: addr.saturating_sub(b) }))
}

pub fn access_before(site: u64, addr: u64, kind: AccessKind, size: u32, given: Option<RawOperand>) {
    let freed_by = |s: &Scheduler| freed_overlap(s, addr, size).filter(|_| sync_object::decode(addr).is_none());
    // A block's words have the same names before and after its free.
    let (logical, value) = with(|s| (freed_by(s).map_or_else(|| s.logical(addr), |(_, at)| at), given.and_then(|g| s.operand(kind, size, g))));
    grant_valued(EventKind::Access(kind), Some(SiteId(site)), addr, size, Some(logical), value);
    // Asked once the access is granted: other threads ran in between (the free among them).
    if let Some(by) = with(|s| freed_by(s).map(|(f, _)| f.by)) {
        // The access's event is in the trace (dependent with the free's); the thread stops
        // before it touches the memory.
        done();
        super::violation(ViolationKind::Abort, &after_free(super::current(), kind, logical, by));
    }
    if value.is_some_and(|v| !matches!(v.operand, Operand::Store(_))) {
        // What the update finds, read now that it is granted (nothing else runs until it is
        // done), outside the scheduler: were the address bad, this faults where the
        // instruction would.
        // SAFETY: the granted access's own address and size; its instruction comes next.
        let found = unsafe { update_check::bytes_at(addr, size) };
        with(|s| s.threads[s.current].found = found);
    }
}

/// What thread `me` did to `at` in a heap block thread `by` freed, for the violation's message.
fn after_free(me: u32, kind: AccessKind, at: LogicalAddr, by: u32) -> String {
    let verb = match kind {
        AccessKind::Free => return format!("T{me} frees {at} again, a heap block T{by} freed (a double free)"),
        AccessKind::Load | AccessKind::AtomicLoad => "reads",
        AccessKind::Store | AccessKind::AtomicStore => "writes",
        AccessKind::Rmw | AccessKind::CmpXchg | AccessKind::UnchangedUpdate => "updates",
    };
    format!("T{me} {verb} {at} in a heap block T{by} freed (a use after free)")
}

pub fn access_after() {
    done();
}
