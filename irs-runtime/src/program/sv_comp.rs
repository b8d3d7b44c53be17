//! The SV-COMP interface (SV-COMP's rules for concurrency tasks), so that SV-COMP's concurrency
//! tasks build and verify unchanged: the pass routes `__VERIFIER_assert`, `__VERIFIER_assume`,
//! `__VERIFIER_atomic_begin`/`_end`, the calls of functions named `__VERIFIER_atomic_*` and
//! `__VERIFIER_nondet_*` here. (`reach_error` and `__VERIFIER_error` are violations, reported by
//! the pass's violation hook.)
//!
//! - `__VERIFIER_assert(c)`: a violation when `c` is 0.
//! - `__VERIFIER_assume(c)`: when `c` is 0, the execution is one the program rules out. In
//!   EXPLORE it ends there, `discarded` (neither a bug nor evidence of safety), as at the
//!   process's end: the other threads are killed where they stand, so what they could do first
//!   is explored in other executions, and nothing after the failed assumption is (SV-COMP's
//!   semantics). Elsewhere the process leaves with a message on stderr (status 0): a run the
//!   program assumes away is outside anything a verification covers.
//! - atomic blocks: in EXPLORE a block is one step (its accesses are recorded as part of it, no
//!   other thread runs in between); elsewhere, one process-wide recursive mutex serialises the
//!   blocks (plain accesses of other threads are not held off in a free run).
//! - With SV-COMP's conventions (`irs verify --svcomp`), `abort()` in EXPLORE ends the execution
//!   as a failed `__VERIFIER_assume` does (tasks write `assume_abort_if_not(c)` as
//!   `if (!c) abort();`); otherwise it is a violation, as in any C program.
//! - `__VERIFIER_nondet_*`: in EXPLORE a choice of the calling thread among a small domain of
//!   values (`IRS_NONDET_VALUES`, set by the executor; default 0,1; a `bool`'s is always {0,1}),
//!   each value another event. Elsewhere the domain's first value, the one the verifier's first
//!   execution takes (so that a run under a prefix stays on the verified trace).

use crate::enforce::enforcer;
use crate::mode::{self, Mode};
use crate::record::recorder;
use crate::explore::scheduler;
use shared_proto::{EventKind, ObjectRef, SiteId, ViolationKind};
use std::ffi::c_int;
use std::sync::OnceLock;

use shared_proto::explore_protocol::{DEFAULT_NONDET_VALUES, ENV_NONDET_VALUES as NONDET_VALUES_VAR};

/// What a `__VERIFIER_nondet_*` returns, as the pass tells it (`irs-instrument/src/sv_comp.rs`
/// has the same codes).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum NondetType {
    Bool,
    /// An integer of this many bits, signed or not.
    Int { bits: u32, signed: bool },
    Pointer,
    Float,
}

impl NondetType {
    fn from_code(code: u32) -> NondetType {
        match code {
            1 => NondetType::Bool,
            2 => NondetType::Pointer,
            3 => NondetType::Float,
            c => NondetType::Int { bits: (c >> 8).clamp(1, 64), signed: c & 1 == 1 },
        }
    }

    /// `v` as this type holds it (truncated to its width), as an i64.
    fn convert(self, v: i64) -> i64 {
        match self {
            NondetType::Bool => (v != 0) as i64,
            NondetType::Int { bits: 64, .. } | NondetType::Pointer | NondetType::Float => v,
            NondetType::Int { bits, signed: true } => (v << (64 - bits)) >> (64 - bits),
            NondetType::Int { bits, signed: false } => ((v as u64) & ((1u64 << bits) - 1)) as i64,
        }
    }
}

/// The explored values, as given (checked once, then kept).
fn values() -> &'static [i64] {
    static VALUES: OnceLock<Vec<i64>> = OnceLock::new();
    VALUES.get_or_init(|| {
        let parsed: Option<Vec<i64>> = std::env::var(NONDET_VALUES_VAR)
            .ok()
            .map(|v| v.split(',').map(|x| x.trim().parse::<i64>()).collect::<Result<Vec<_>, _>>().ok())
            .unwrap_or_else(|| Some(DEFAULT_NONDET_VALUES.to_vec()));
        match parsed {
            Some(v) if !v.is_empty() => v,
            _ => {
                eprintln!("irs-runtime: {NONDET_VALUES_VAR} must be comma-separated integers; using 0,1");
                DEFAULT_NONDET_VALUES.to_vec()
            }
        }
    })
}

/// The domain of a type: the explored values as the type holds them, without repeats.
fn domain(ty: NondetType) -> Vec<i64> {
    let mut out: Vec<i64> = Vec::new();
    let given: &[i64] = if ty == NondetType::Bool { &[0, 1] } else { values() };
    for &v in given {
        let c = ty.convert(v);
        if !out.contains(&c) {
            out.push(c);
        }
    }
    out
}

/// Prepare what EXPLORE's executions need (the domain, parsed once before the first fork so that
/// no execution allocates for it).
pub fn prepare() {
    let _ = values();
    let _ = crate::program::program_info::site_location(SiteId(0));
    SVCOMP.store(std::env::var_os(shared_proto::explore_protocol::ENV_SVCOMP).is_some(), std::sync::atomic::Ordering::Relaxed);
    crate::thread::spin_watch::prepare();
    crate::sync::condvar::prepare();
    crate::explore::scheduler::thread_bound_prepare();
}

/// SV-COMP's conventions are on (`irs verify --svcomp`): `abort()` discards the execution.
/// Relaxed: set once by `prepare`, before the first execution.
static SVCOMP: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// In EXPLORE with SV-COMP's conventions, `abort()` is no violation: it ends an execution the
/// task rules out (SV-COMP's `assume_abort_if_not`), as a failed `__VERIFIER_assume` does.
pub fn abort_discards() -> bool {
    SVCOMP.load(std::sync::atomic::Ordering::Relaxed) && mode::get() == Mode::Explore
}

/// Record or enforce a visible operation outside EXPLORE (ENFORCE's rules, RECORD's trace);
/// `op` performs it and says what it acted on.
fn outside_explore(site: u64, kind: EventKind, op: impl FnOnce() -> ObjectRef) {
    let rec = |k: EventKind, object: ObjectRef| {
        if recorder::active() {
            recorder::lock().push(Some(SiteId(site)), k, object);
        }
    };
    if mode::get() == Mode::Enforce && enforcer::constrained() {
        enforcer::before(Some(SiteId(site)));
        let object = op();
        rec(kind, object);
        enforcer::after();
    } else {
        let object = op();
        rec(kind, object);
    }
}

#[no_mangle]
pub extern "C" fn __irs_sv_assert(cond: c_int, site: u64) {
    if cond != 0 {
        return;
    }
    let message = format!("{}: __VERIFIER_assert failed", crate::program::program_info::site_location(SiteId(site)));
    if mode::get() == Mode::Explore {
        scheduler::violation(ViolationKind::Assert, &message);
    }
    if recorder::active() {
        recorder::lock().set_violation(shared_proto::Outcome::Violation { kind: ViolationKind::Assert, message: message.clone() });
        recorder::finish(shared_proto::Outcome::Incomplete, false);
    }
    eprintln!("{message}");
    // SAFETY: ending the process as a failed assertion does.
    unsafe { libc::abort() }
}

#[no_mangle]
pub extern "C" fn __irs_sv_assume(cond: c_int, site: u64) {
    if cond != 0 {
        return;
    }
    if mode::get() == Mode::Explore {
        scheduler::assume_failed(site);
    }
    eprintln!(
        "irs-runtime: __VERIFIER_assume failed at {}: this run is one the program assumes away, outside what any verification covers",
        crate::program::program_info::site_location(SiteId(site))
    );
    // SAFETY: leaving the process at once (stdio flushed first).
    unsafe {
        libc::fflush(std::ptr::null_mut());
        libc::_exit(0)
    }
}

/// The process-wide recursive mutex of atomic blocks outside EXPLORE.
fn block_mutex() -> *mut libc::pthread_mutex_t {
    struct M(std::cell::UnsafeCell<libc::pthread_mutex_t>);
    // SAFETY: a pthread mutex is made to be shared between threads.
    unsafe impl Sync for M {}
    static BLOCKS: M = M(std::cell::UnsafeCell::new(libc::PTHREAD_RECURSIVE_MUTEX_INITIALIZER_NP));
    BLOCKS.0.get()
}

#[no_mangle]
pub extern "C" fn __irs_atomic_begin(site: u64) {
    match mode::get() {
        Mode::Explore => scheduler::atomic_begin(site),
        _ => outside_explore(site, EventKind::Atomic, || {
            // SAFETY: a statically initialised recursive mutex, locked and unlocked in pairs.
            unsafe { libc::pthread_mutex_lock(block_mutex()) };
            ObjectRef::Atomic
        }),
    }
}

#[no_mangle]
pub extern "C" fn __irs_atomic_end(_site: u64) {
    match mode::get() {
        Mode::Explore => scheduler::atomic_end(),
        // SAFETY: see `__irs_atomic_begin`.
        _ => unsafe {
            libc::pthread_mutex_unlock(block_mutex());
        },
    }
}

/// `__VERIFIER_nondet_*`, whose return type is `ty` (see [`NondetType::from_code`]): the value
/// as an i64, which the pass converts.
#[no_mangle]
pub extern "C" fn __irs_nondet(site: u64, ty: u32) -> i64 {
    let ty = NondetType::from_code(ty);
    let d = domain(ty);
    match mode::get() {
        Mode::Explore => d[scheduler::nondet(site, d.len() as u32) as usize],
        _ => {
            // ENFORCE inside the prefix: the verified trace's value; elsewhere the first, as
            // the verifier's default policy takes it.
            let of = d.len() as u32;
            let mut value = 0;
            outside_explore(site, EventKind::Nondet, || {
                if mode::get() == Mode::Enforce {
                    value = enforcer::trace_choice(of).unwrap_or(0);
                }
                ObjectRef::Choice { value, of }
            });
            d[value as usize]
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_are_held_as_the_type_holds_them() {
        let u8t = NondetType::from_code(8 << 8);
        let i8t = NondetType::from_code(8 << 8 | 1);
        assert_eq!((u8t.convert(-1), i8t.convert(255), i8t.convert(-1)), (255, -1, -1));
        assert_eq!(NondetType::from_code(1).convert(7), 1);
        assert_eq!(NondetType::from_code(32 << 8 | 1).convert(1 << 32), 0);
        assert_eq!(domain(NondetType::Bool), vec![0, 1]);
    }
}
