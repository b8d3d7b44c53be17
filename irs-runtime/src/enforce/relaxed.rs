//! Runs with no constraint from their start (DESIGN §4; docs/src/synchronisation.md "Once
//! relaxed"): under ENFORCE, with the cutoff in force empty when the program starts (its
//! verification finished, or the user cut it to nothing), no chaos and no trace recorded
//! alongside. Every thread is free from its first event: nothing waits, and a divergence cannot
//! be serialised (every thread already runs past the verified prefix). What such a run must
//! still do is behave as one of the explored executions, so a primitive may use the C library's
//! own implementation where every behaviour it allows was explored (`sync::rwlock`).
//!
//! Decided once, before the program's `main` runs (only the main thread exists), and never
//! changed: a later cutoff that empties the prefix mid-run finds objects already in irs's own
//! implementation, whose state the C library's could not take over.

use std::sync::atomic::{AtomicBool, Ordering};

static RELAXED: AtomicBool = AtomicBool::new(false);

/// Called once at start-up with whether the run has no constraint and nothing that watches
/// every event (chaos, a recorded trace).
pub fn decide(relaxed: bool) {
    // Relaxed: written while only the main thread exists; pthread_create orders it before
    // everything the other threads do.
    RELAXED.store(relaxed, Ordering::Relaxed);
}

/// Is this run relaxed from its start?
pub fn relaxed() -> bool {
    // Relaxed: see `decide`; the value never changes once threads exist.
    RELAXED.load(Ordering::Relaxed)
}

/// Nothing for irs to do but the C library's call: OFF, or a run relaxed from its start
/// (nothing waits, is recorded or can be serialised): for the mutex operations (the C library's
/// mutex is the one the other modes use too, around their events) and for creating and joining
/// threads (a thread of such a run is free from its first event: it needs no identity in the
/// verified trace, no counters, no part in a serialisation).
pub fn forwarded() -> bool {
    crate::mode::plain() || relaxed()
}
