//! The fiber stacks of EXPLORE's logical threads (DESIGN §7), made once per fork server and
//! reused by every execution: logical thread `i` always runs on stack `i`. Mapping a stack per
//! thread per execution cost a mapping, a guard, page faults and an unmapping each time; and
//! fixed stacks give every execution of a schedule the same stack addresses, whether it runs in
//! the persistent worker or in a process forked from it.
//!
//! `T0` (the program's `main`) gets a stack of the size a main thread usually has, since
//! programs put large arrays there; the others get the executor's stack size. Each level of
//! snapshots gets a *host* stack too: the serving loop of an execution paused at a snapshot runs
//! there, beside the execution's own fibers, which it resumes for each continuation.

use crate::explore::fiber::{Stack, Stacks};
use shared_proto::explore_buffer::MAX_THREADS;
use std::cell::UnsafeCell;

/// The stack of `main` (the usual main-thread limit; reserved, not committed).
const MAIN_STACK_BYTES: usize = 8 << 20;

struct Pool {
    main: Stacks,
    others: Stacks,
    hosts: Stacks,
}

/// Snapshot levels (nested pauses) one execution may have.
pub const MAX_LEVELS: usize = 32;
const HOST_STACK_BYTES: usize = 256 << 10;

struct Global(UnsafeCell<Option<Pool>>);

// SAFETY: made by the fork server before any execution, on its one thread, and only read
// afterwards (EXPLORE runs every logical thread on that one OS thread).
unsafe impl Sync for Global {}

static POOL: Global = Global(UnsafeCell::new(None));

/// Map the stacks (once; later calls do nothing). `false` if they cannot be mapped.
pub fn prepare(stack_bytes: usize) -> bool {
    // SAFETY: one thread, before any execution (see `Global`).
    let pool = unsafe { &mut *POOL.0.get() };
    if pool.is_none() {
        let (Some(main), Some(others), Some(hosts)) =
            (Stacks::new(1, MAIN_STACK_BYTES), Stacks::new(MAX_THREADS - 1, stack_bytes), Stacks::new(MAX_LEVELS + 1, HOST_STACK_BYTES))
        else {
            return false;
        };
        *pool = Some(Pool { main, others, hosts });
    }
    true
}

/// The stack of logical thread `i`.
pub fn stack(i: usize) -> Option<Stack> {
    // SAFETY: read-only after `prepare` (see `Global`).
    let pool = unsafe { (*POOL.0.get()).as_ref()? };
    if i == 0 {
        pool.main.get(0)
    } else {
        pool.others.get(i - 1)
    }
}

/// The host stack of snapshot level `level` (1 for the first pause).
pub fn host_stack(level: usize) -> Option<Stack> {
    // SAFETY: read-only after `prepare` (see `Global`).
    unsafe { (*POOL.0.get()).as_ref()?.hosts.get(level) }
}

/// The mappings, `(start, length)`: not part of what a persistent worker restores as a whole
/// (of the threads' stacks only the live parts matter; see `scheduler::live_stacks`).
pub fn regions() -> [(usize, usize); 3] {
    // SAFETY: read-only after `prepare` (see `Global`).
    match unsafe { (*POOL.0.get()).as_ref() } {
        Some(p) => [p.main.region(), p.others.region(), p.hosts.region()],
        None => [(0, 0); 3],
    }
}
