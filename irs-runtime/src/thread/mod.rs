//! What each thread keeps for itself: its id and event counter, the fast-path flag instrumented
//! code tests, whether it runs a signal handler, and where it is in the loops the runtime watches.

pub(crate) mod thread_state;
pub(crate) mod thread_flag;
pub(crate) mod signal_state;
pub(crate) mod spin_watch;
