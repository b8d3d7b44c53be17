//! The callbacks the pass inserts around memory accesses and before violations (DESIGN §5).
//! Instrumented code calls `__irs_before`/`__irs_after` only when the thread's fast-path flag is
//! set, so in OFF mode these are never reached.

use crate::mode::{self, Mode};
use crate::enforce::chaos;
use crate::enforce::enforcer;
use crate::record::recorder;
use crate::explore::scheduler;
use crate::thread::thread_state::{self, Pending};
use shared_proto::abi;
use shared_proto::{EventKind, ObjectRef, Outcome, SiteId};
use std::ffi::{c_char, c_void, CStr};

#[no_mangle]
pub extern "C" fn __irs_before(site: u64, addr: *const c_void, info: u32) {
    before(site, addr, info, None)
}

/// A store whose value the pass gives (`shared_proto::abi::CB_BEFORE_STORE`).
#[no_mangle]
pub extern "C" fn __irs_before_store(site: u64, addr: *const c_void, info: u32, value: u64) {
    before(site, addr, info, Some(scheduler::RawOperand::Store(value)))
}

/// A cmpxchg or atomicrmw whose operands the pass gives (`shared_proto::abi::CB_BEFORE_UPDATE`).
#[no_mangle]
pub extern "C" fn __irs_before_update(site: u64, addr: *const c_void, info: u32, a: u64, b: u64) {
    before(site, addr, info, Some(scheduler::RawOperand::Update(a, b)))
}

/// Before an access; `value`: its operands where the pass gave them (only EXPLORE uses them).
fn before(site: u64, addr: *const c_void, info: u32, value: Option<scheduler::RawOperand>) {
    if crate::thread::signal_state::inside() {
        // A signal handler's accesses are nobody's events (`signals`).
        return;
    }
    match mode::get() {
        Mode::Record => {}
        Mode::Enforce => {
            chaos::perturb();
            let decoded = abi::decode_info(info);
            if let Some((kind, size)) = decoded {
                crate::enforce::serial::note_access(site, addr as u64, kind, size);
            }
            // The rules first, outside the recorder lock; then recorded (if recording too).
            let touch = decoded.map(|(kind, size)| enforcer::Touch::Access { addr: addr as u64, size: size as u64, writes: kind.writes() });
            enforcer::before_touching(Some(SiteId(site)), touch);
            if !recorder::active() {
                return;
            }
        }
        Mode::Chaos => return chaos::perturb(),
        Mode::Explore => {
            if let Some((kind, size)) = abi::decode_info(info) {
                scheduler::access_before(site, addr as u64, kind, size, value);
            }
            return;
        }
        Mode::Off => return,
    }
    if thread_state::push_pending(Pending { site, addr: addr as u64, info }).is_some() {
        recorder::hold();
    }
}

#[no_mangle]
pub extern "C" fn __irs_after(site: u64) {
    if crate::thread::signal_state::inside() {
        return;
    }
    match mode::get() {
        Mode::Record | Mode::Enforce => {}
        Mode::Explore => return scheduler::access_after(),
        Mode::Off | Mode::Chaos => return,
    }
    if recorder::active() {
        if let Some((p, depth_left)) = thread_state::pop_pending(site) {
            if let Some((kind, size)) = abi::decode_info(p.info) {
                recorder::complete_access(SiteId(site), EventKind::Access(kind), ObjectRef::Memory { addr: p.addr, size, logical: None }, depth_left == 0);
            }
        }
    }
    // Published after it is recorded: every event that waited for it comes later in the trace.
    if mode::get() == Mode::Enforce {
        crate::enforce::serial::access_done();
        enforcer::after();
    }
}

/// # Safety
/// The string arguments are null or NUL-terminated strings (what `__assert_fail` received).
unsafe fn c_str(p: *const c_char) -> Option<String> {
    // SAFETY: per the function contract.
    (!p.is_null()).then(|| unsafe { CStr::from_ptr(p) }.to_string_lossy().into_owned())
}

/// Called right before `__assert_fail`, `abort`, `reach_error` or `__VERIFIER_error`; the call
/// itself then runs as in the plain program.
#[no_mangle]
pub extern "C" fn __irs_on_violation(
    _site: u64,
    kind: u32,
    assertion: *const c_char,
    file: *const c_char,
    line: u32,
    function: *const c_char,
) {
    let mode = mode::get();
    if !(mode == Mode::Explore || recorder::active()) {
        return;
    }
    let Some(kind) = abi::violation_kind(kind) else { return };
    if kind == shared_proto::ViolationKind::Abort && crate::program::sv_comp::abort_discards() {
        scheduler::assume_failed(_site);
    }
    // SAFETY: the pass passes __assert_fail's own string arguments, or nulls.
    let (assertion, file, function) = unsafe { (c_str(assertion), c_str(file), c_str(function)) };
    let message = match (assertion, file, function) {
        (Some(a), Some(f), Some(func)) => format!("{f}:{line}: {func}: Assertion `{a}' failed"),
        (Some(a), _, _) => format!("Assertion `{a}' failed"),
        _ => String::new(),
    };
    if mode == Mode::Explore {
        scheduler::violation(kind, &message);
    }
    recorder::lock().set_violation(Outcome::Violation { kind, message });
    // The program is about to abort: write the trace now, keep recording in case it does not.
    recorder::finish(Outcome::Incomplete, false);
}

/// In front of a call of a function EXPLORE does not model (condition variables, semaphores,
/// rwlocks, barriers, ...; see the pass's `known_calls::unsupported_call`): the execution ends as
/// unsupported, naming it, so that `irs verify` says so instead of exploring something else.
/// Elsewhere the call runs as in the plain program.
#[no_mangle]
pub extern "C" fn __irs_unsupported_call(site: u64) {
    if mode::get() == Mode::Explore {
        let (at, what) = crate::program::program_info::site_text(SiteId(site));
        let name = what.strip_prefix("call ").unwrap_or(&what);
        scheduler::finish(shared_proto::explore_buffer::ChildOutcome::Unsupported(&format!("{name} at {at} (EXPLORE does not model it yet)")));
    }
}
