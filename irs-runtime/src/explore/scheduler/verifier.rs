//! The SV-COMP interface under the scheduler (DESIGN §7; `program::sv_comp` calls it): atomic
//! blocks (`__VERIFIER_atomic_*`: the whole block is one step), `__VERIFIER_nondet_*` values,
//! and a failed `__VERIFIER_assume`, which ends the execution as one the program rules out.
//!
//! It must never choose a nondet value itself: the decision does, so that a schedule names it.

use super::decision::{done, grant};
use super::ending::{begin_end, complete_end};
use super::execution::finish;
use super::with;
use shared_proto::explore_buffer::ChildOutcome;
use shared_proto::{EventKind, SiteId};

/// `__VERIFIER_atomic_begin`: the first of a block's (nesting depth 0) is its step; the block's
/// accesses are recorded as part of it, with no decision, until the matching end.
pub fn atomic_begin(site: u64) {
    if with(|s| s.threads[s.current].atomic_depth > 0) {
        with(|s| s.threads[s.current].atomic_depth += 1);
        return;
    }
    grant(EventKind::Atomic, Some(SiteId(site)), 0, 0);
    done();
    with(|s| s.threads[s.current].atomic_depth = 1);
}

pub fn atomic_end() {
    with(|s| {
        let th = &mut s.threads[s.current];
        th.atomic_depth = th.atomic_depth.saturating_sub(1);
    });
}

/// A call of `__VERIFIER_nondet_*` with `of` values to choose from: which one (an index), as the
/// decision chose it.
pub fn nondet(site: u64, of: u32) -> u32 {
    if with(|s| s.threads[s.current].atomic_depth > 0) {
        finish(ChildOutcome::Unsupported("a __VERIFIER_nondet_* call inside an atomic block (__VERIFIER_atomic_*)"));
    }
    grant(EventKind::Nondet, Some(SiteId(site)), 0, of);
    let choice = with(|s| {
        let c = s.choice.min(of.saturating_sub(1));
        let cur = s.current;
        // The event records the value chosen.
        if let Some(op) = s.threads[cur].pending.as_mut() {
            op.addr = c as u64;
        }
        c
    });
    done();
    choice
}

/// `__VERIFIER_assume` with a false condition: the execution is one the program rules out. It
/// ends there, as at the process's end (DESIGN §3): the other threads are killed where they
/// stand, so that everything they could do before the failed assumption is explored in other
/// executions (with the kills moved after it), and nothing after it is, as SV-COMP's semantics
/// says. An atomic block the thread is in leaves nothing behind that anyone sees.
pub fn assume_failed(site: u64) -> ! {
    with(|s| {
        let th = &mut s.threads[s.current];
        th.atomic_depth = 0;
        th.atomic_open = 0;
    });
    begin_end(Some(SiteId(site)), 0);
    with(|s| s.discarding = true);
    complete_end()
}
