//! The calls the pass inserts at a watched loop's header and entry (`spin_loops`), dispatched to
//! the mode that watches loops (EXPLORE's scheduler, a serialised run); the watch itself is
//! `spin_watch`.

/// # Safety
/// Called by instrumented code (the pass's `spin_loops`) with a site id.
#[no_mangle]
pub extern "C" fn __irs_loop_head(site: u64) {
    match crate::mode::get() {
        crate::mode::Mode::Explore => crate::explore::scheduler::loop_head(site),
        crate::mode::Mode::Enforce => crate::enforce::serial::loop_head(site),
        _ => {}
    }
}

/// The same at the header of a loop that waits on a condition variable, watched in EXPLORE only:
/// the thread there is not counted as waiting by the default policy
/// (`spin_watch::ThreadSpin::in_wait_loop`); a serialised run has no use for it (a thread in
/// the wait blocks until woken, and is not given the turn meanwhile).
#[no_mangle]
pub extern "C" fn __irs_wait_loop_head(site: u64) {
    if crate::mode::get() == crate::mode::Mode::Explore {
        crate::explore::scheduler::wait_loop_head(site)
    }
}

#[no_mangle]
pub extern "C" fn __irs_loop_enter(_site: u64) {
    match crate::mode::get() {
        crate::mode::Mode::Explore => crate::explore::scheduler::loop_enter(),
        crate::mode::Mode::Enforce => crate::enforce::serial::loop_enter(),
        _ => {}
    }
}
