//! Each logical thread's virtual time (DESIGN §7: sleeps cost no real time), which `abi::clock`
//! and `abi::sleeps` read and advance: it starts at its creator's, moves on by the thread's
//! sleeps and clock reads, and a join brings it up to the joined thread's (see `threads`). A
//! sleep also makes the default policy let every other thread go first (see `decision`).
//!
//! It must never read the real clock or sleep: a thread's time is a function of its history.

use super::{active, with};

/// The calling thread slept `nanos` (it returned at once: time costs nothing here, but its
/// virtual time moves on): until it runs its next operation, the default policy prefers every
/// thread that did not (see `decide`).
pub fn slept(nanos: u64) {
    if active() {
        with(|s| {
            let t = &mut s.threads[s.current];
            t.slept = true;
            t.clock_ns = t.clock_ns.saturating_add(nanos);
        });
    }
}

/// The calling thread's virtual time in ns (see `abi::clock`), then advanced by `then`: 0 when
/// no execution runs (the fork server itself). A thread that reads the clock is most often
/// waiting for time to pass (a loop that polls until a deadline), which the OS lets other
/// threads use: the default policy lets the threads that can move go first, as after a sleep.
pub fn clock_read(then: u64) -> u64 {
    if !active() {
        return 0;
    }
    with(|s| {
        let t = &mut s.threads[s.current];
        let now = t.clock_ns;
        t.clock_ns = now.saturating_add(then);
        t.slept = true;
        now
    })
}

/// Advance the calling thread's virtual time to `ns` if it is earlier (an absolute sleep).
pub fn clock_reach(ns: u64) {
    if active() {
        with(|s| {
            let t = &mut s.threads[s.current];
            t.clock_ns = t.clock_ns.max(ns);
            t.slept = true;
        });
    }
}
