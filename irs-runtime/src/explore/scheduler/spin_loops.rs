//! The loops the runtime watches for spinning (DESIGN §7; `thread::spin_watch` keeps the
//! iterations, `abi::loop_callbacks` calls here): a thread back at a watched loop's header after
//! an iteration that only read halts there for good (spin-assume), iterates on under an
//! iterating policy, or, past `--spin-bound`, ends the execution as discarded.
//!
//! It must never decide whether the program hangs: that is known only when nothing can move
//! any more ([`spin_verdict`](super::waits::spin_verdict)).

use super::threads::stop_thread;
use super::verifier::assume_failed;
use super::{current, with};
use crate::thread::spin_watch::Iteration;

/// The calling thread enters a watched loop from outside (`spin_watch`).
pub fn loop_enter() {
    with(|s| s.threads[s.current].spin.enter());
}

/// [`loop_head`] for a loop that waits on a condition variable (`spin_watch`'s wait loops).
pub fn wait_loop_head(site: u64) {
    with(|s| s.threads[s.current].spin.in_wait_loop());
    loop_head(site)
}

/// The calling thread is at the top of a watched loop's header (`spin_watch`): when the
/// iteration it completed only read, the thread halts there for good (spin-assume), and the
/// others go on; at the execution's end, [`spin_verdict`](super::waits::spin_verdict) says whether
/// it was a hang.
pub fn loop_head(site: u64) {
    let spins = with(|s| {
        let me = s.current;
        let done = s.threads[me].spin.head(site, &mut s.writes);
        let spins = s.threads[me].atomic_depth == 0 && done == Iteration::Pure;
        let from = std::mem::replace(&mut s.threads[me].iteration_step, s.step);
        if spins && s.policy.iterates() {
            // `Policy::Anchor`: the loop iterates; the iteration's steps are flagged, so that the
            // schedule without them is an execution in which the thread did not iterate.
            s.buffer.mark_read_only(me as u32, from);
            return false;
        }
        spins
    });
    if let (true, Some(k)) = (spins, crate::thread::spin_watch::bound()) {
        // `--spin-bound`: iterate on, up to the bound; past it the execution is discarded.
        if with(|s| s.threads[s.current].spin.pure_run()) > k {
            assume_failed(site)
        }
        return;
    }
    if spins {
        let me = current() as usize;
        with(|s| s.threads[me].spin_halted = true);
        stop_thread(me)
    }
}
