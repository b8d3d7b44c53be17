//! The C ABI the pass calls (DESIGN §5): the callbacks around memory accesses and at violations,
//! the wrappers of pthread and C11 thread functions, of allocation, sleeps, signal handlers and the
//! process's exit, and the calls at watched loops. Each dispatches to the mode in force; none keeps
//! state of its own beyond the call.

pub(crate) mod callbacks;
pub(crate) mod clock;
pub(crate) mod pthread_wrappers;
pub(crate) mod c11_threads;
pub(crate) mod alloc_wrappers;
pub(crate) mod process_exit;
pub(crate) mod sleeps;
pub(crate) mod signals;
pub(crate) mod loop_callbacks;
