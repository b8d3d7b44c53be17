//! What the program has registered to run at its end (`atexit`, `on_exit`, static destructors),
//! as far as the modes need to know it: EXPLORE refuses to run exit handlers after `main` called
//! `pthread_exit` (`scheduler`), and skips the C library's `exit` when there is nothing to run.
//! A leaf: the process's end (`process_end`) counts registrations here, the modes read them.

use std::sync::atomic::{AtomicUsize, Ordering};

extern "C" {
    /// glue.c: how many entries the executable's `.fini_array` has.
    fn __irs_fini_array_len() -> std::ffi::c_ulong;
}

/// Handlers registered with `atexit` or `on_exit` while the program ran. Relaxed: a count, read
/// in EXPLORE only, where one fiber runs at a time.
static ATEXIT_COUNT: AtomicUsize = AtomicUsize::new(0);

/// The program registered one more exit handler.
pub fn registered() {
    ATEXIT_COUNT.fetch_add(1, Ordering::Relaxed);
}

pub fn atexit_handlers() -> usize {
    ATEXIT_COUNT.load(Ordering::Relaxed)
}

/// Whether an end has nothing to run before the kills: no exit handler registered through the
/// routed `atexit`/`on_exit`, and no static destructor but the C runtime's own (which clears
/// state nobody reads again). Then EXPLORE skips the C library's `exit` on `main`'s return (a
/// microsecond an execution, and pages the worker would have to restore).
pub fn nothing_to_run() -> bool {
    // SAFETY: reads the linker's bounds of the array.
    atexit_handlers() == 0 && unsafe { __irs_fini_array_len() } <= 1
}
