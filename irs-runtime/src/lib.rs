//! irs-runtime: the library linked into every program built by `irs cc` (DESIGN §2, §4–§6;
//! IRS paper §4). It exports the C ABI the pass calls (`__irs_start`, `__irs_before`,
//! `__irs_after`, `__irs_on_violation`, the pthread wrappers) and implements the modes:
//!
//! - OFF (no `IRS_MODE`): the program behaves exactly like the plain build; threads keep their
//!   fast-path flag clear, so instrumented accesses cost a TLS load and a branch.
//! - RECORD (`IRS_MODE=record IRS_TRACE=FILE`, set by `irs record`): every visible event is
//!   serialised and written to a trace whose order is a real linearisation of the run.
//!
//! - EXPLORE (`IRS_MODE=explore`, set by the irs executor): a fork server whose children run
//!   `main` under the controlled scheduler, every logical thread a fiber.
//!
//! - ENFORCE (`IRS_PREFIX=FILE`, set by `irs run`): every run contains the verified prefix
//!   before anything else happens (see [`enforcer`]); `IRS_CHAOS=1` shakes schedules.

mod alloc_wrappers;
mod barrier;
mod c11_threads;
mod callbacks;
mod chaos;
mod condvar;
mod enforcer;
mod explore_server;
mod futex;
mod input_env;
mod input_files;
mod input_stat;
mod object_table;
pub mod fiber;
pub mod fiber_tls;
mod mode;
mod mutex_kind;
mod once;
mod process_end;
mod process_exit;
mod process_image;
mod program_info;
mod pthread_wrappers;
mod recorder;
mod rt_lock;
mod rwlock;
mod sandbox;
mod scheduler;
mod semaphore;
mod serial;
mod signal_state;
mod signals;
mod sleeps;
mod spin_lock;
mod spin_loop;
mod stack_pool;
mod start;
mod sv_comp;
mod sync_ops;
mod thread_flag;
mod thread_state;

pub use mode::Mode;
pub use program_info::ProgramInfo;
