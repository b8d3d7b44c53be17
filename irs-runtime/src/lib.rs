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
//!   before anything else happens (see [`enforce::enforcer`]); `IRS_CHAOS=1` shakes schedules.
//!
//! The files are grouped by role, and data flows one way between the groups:
//!
//! - `abi/`: the C ABI the pass calls; each call dispatches to the mode in force;
//! - `program/`: the program as a whole: its start (which picks the mode), its end, the SV-COMP
//!   interface, its inputs and site records; behaviours that need every mode call the modes;
//! - `record/`, `explore/`, `enforce/`: one folder per mode; a mode never calls back into a
//!   behaviour (EXPLORE's fork server learns where to pause through `scheduler::on_pause`);
//! - `sync/`: the primitives built from internal locks and choices, the same in every mode;
//! - `thread/`: what each thread keeps for itself (leaves every group may use);
//! - `mode`: which mode is in force (a leaf).

mod abi;
mod enforce;
pub mod explore;
mod mode;
mod program;
mod record;
mod sync;
mod thread;

pub use mode::Mode;
pub use program::program_info::ProgramInfo;
