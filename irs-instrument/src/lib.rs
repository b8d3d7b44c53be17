//! The IRS instrumentation: the LLVM pass (DESIGN §5, IRS paper §4) and the `irs cc` compiler
//! driver around it (clang → pass → clang/link with irs-runtime).

mod access_class;
pub mod cc_args;
mod data_model;
pub mod driver;
mod escape;
pub mod instrumented_binary;
mod ir;
mod known_calls;
mod module_embed;
pub mod pass;
pub mod runtime_archive;
pub mod site_report;
mod spin_loops;
mod sv_comp;
pub mod toolchain;
mod versioning;
