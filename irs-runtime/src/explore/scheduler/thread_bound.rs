//! `irs verify --max-threads N` (EXPLORE): a thread about to create its (N+1)-th thread ends
//! the process there instead, as `_exit` would (the `End` event, no exit handlers, then the
//! kills of the process's end), and the execution's outcome is `ThreadBound`: a bounded cut,
//! which the verdict names.
//!
//! The bound counts each thread's own creations, not the process's threads: creations by
//! different threads commute (the child is "the n-th thread its creator creates", DESIGN §3),
//! so how many threads the process has when a thread creates one is not a function of that
//! creation's history, while how many the creator has created is (its own program order). The
//! cut is a function of the thread's history too: the program whose (N+1)-th `pthread_create`
//! of each thread is `_exit(0)` is explored as completely as any, and its executions are the
//! original's in which no thread creates more than N threads, plus every such execution's
//! part up to the creation that would exceed the bound. Programs that create threads in an
//! unbounded loop (SV-COMP's `while (1) pthread_create(...)`) get answers within the bound;
//! without it, the 64th thread is EXPLORE's capacity (unsupported).

use super::ending::{begin_end, complete_end};
use super::with;
use shared_proto::SiteId;
use std::sync::atomic::{AtomicU32, Ordering};

/// The bound, 0 for none. Relaxed: set once by `prepare`, before the first execution.
static MAX: AtomicU32 = AtomicU32::new(0);

/// Read `--max-threads` (EXPLORE, before the first execution).
pub fn prepare() {
    let n = std::env::var(shared_proto::explore_protocol::ENV_MAX_THREADS).ok().and_then(|v| v.trim().parse().ok()).unwrap_or(0);
    MAX.store(n, Ordering::Relaxed);
}

/// Before the calling thread's `pthread_create` at `site`: when it has created as many threads
/// as the bound lets it, the process ends here (never returns); else nothing.
pub fn cut_if_over(site: u64) {
    let max = MAX.load(Ordering::Relaxed);
    if max == 0 || with(|s| s.threads[s.current].children) < max {
        return;
    }
    begin_end(Some(SiteId(site)), 0);
    with(|s| s.thread_bound = Some(max));
    complete_end()
}
