//! The thread-local fast-path flag tested inline by instrumented code (defined in `csrc/glue.c`).

extern "C" {
    fn __irs_set_thread_active(on: u8);
    fn __irs_thread_active_get() -> u8;
}

/// Are the calling thread's callbacks on?
pub fn active() -> bool {
    // SAFETY: the glue function only reads the calling thread's own TLS byte.
    unsafe { __irs_thread_active_get() != 0 }
}

/// Turn the calling thread's callbacks on or off.
pub fn set_active(on: bool) {
    // SAFETY: the glue function only writes the calling thread's own TLS byte.
    unsafe { __irs_set_thread_active(on as u8) }
}
