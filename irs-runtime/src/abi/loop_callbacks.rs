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

#[no_mangle]
pub extern "C" fn __irs_loop_enter(_site: u64) {
    match crate::mode::get() {
        crate::mode::Mode::Explore => crate::explore::scheduler::loop_enter(),
        crate::mode::Mode::Enforce => crate::enforce::serial::loop_enter(),
        _ => {}
    }
}
