//! One visible operation outside EXPLORE, as ENFORCE runs it (DESIGN §4): chaos's shake, the
//! enforcer's rules before and its count after, and whether a trace is recorded alongside. Every
//! wrapper of the C ABI and every primitive runs its operations through here.

use crate::enforce::{chaos, enforcer};
use crate::mode::{self, enforcing, Mode};
use crate::record::recorder;
use shared_proto::SiteId;

/// Run `op` as one event: under ENFORCE, its rules before and its count after (the count is
/// published after `op` returns, so a recorded event precedes every event that waited for it).
pub(crate) fn enforced<R>(site: u64, op: impl FnOnce() -> R) -> R {
    enforced_touching(site, None, op)
}

/// [`enforced`] for an event whose object the prefix's object index can name (past its cut it
/// then waits only for the prefix events it depends on: `enforcer`'s rule 2).
pub(crate) fn enforced_touching<R>(site: u64, touch: Option<enforcer::Touch>, op: impl FnOnce() -> R) -> R {
    if matches!(mode::get(), Mode::Chaos | Mode::Enforce) {
        chaos::perturb();
    }
    if enforcing() && !crate::thread::signal_state::inside() && enforcer::constrained() {
        enforcer::before_touching(Some(SiteId(site)), touch);
        let r = op();
        enforcer::after();
        r
    } else {
        op()
    }
}

/// RECORD mode, or ENFORCE with a trace being recorded alongside.
pub(crate) fn recording() -> bool {
    recorder::active()
}
