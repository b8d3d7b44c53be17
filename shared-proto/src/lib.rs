//! The vocabulary that the IRS pass, runtime and tools share (DESIGN §2, §3).
//!
//! Ids are newtypes ([`ThreadId`], [`SiteId`], [`ProgramId`]); sites describe instrumented
//! instructions ([`site`]); the pass embeds one [`module_descriptor::ModuleDescriptor`] per
//! instrumented module; the runtime writes [`trace::Trace`] files; an input's file captures are laid out by
//! [`input_files`]. Nothing here touches LLVM; the operating system only through files.

pub mod abi;
pub mod access_kind;
pub mod codec;
pub mod dependence;
pub mod equivalence;
pub mod event;
pub mod explore_buffer;
pub mod explore_protocol;
pub mod fx_hash;
pub mod hash;
pub mod image_range;
pub mod input_env;
pub mod input_files;
pub mod le;
pub mod ids;
pub mod logical_addr;
pub mod module_descriptor;
pub mod operand;
pub mod outcome;
pub mod prefix_check;
pub mod prefix_objects;
pub mod prefix_segment;
pub mod requirement_table;
pub mod site;
pub mod stdin_stat;
pub mod symbolizer;
pub mod sync_object;
pub mod trace;
pub mod value_model;
pub mod vector_clock;

pub use access_kind::AccessKind;
pub use event::{Event, EventKind, ObjectRef, PendingOp, Step};
pub use ids::{ProgramId, SiteId, ThreadId};
pub use logical_addr::{LogicalAddr, Region};
pub use outcome::{Outcome, ViolationKind};
pub use site::{GlobalInfo, ModuleSites, SiteInfo, SiteKind};
pub use trace::{Trace, TraceError, ThreadInfo};
