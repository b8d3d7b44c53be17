//! The IRS verifier (DESIGN §7–§8): the executor that drives an instrumented program's fork
//! server through controlled executions, schedules as files, and the k-partial QPOR
//! exploration (papers 000 and 002) over the program's unfolding.

pub mod cex;
pub mod comb;
pub mod configuration;
pub mod executor;
pub mod frontier;
pub mod memory_limit;
pub mod object_table;
pub mod qpor;
pub mod race_free_words;
mod sandbox_dir;
pub mod schedule;
pub mod sibling_marks;
pub mod thread_names;
pub mod unfolding;

/// The fast hasher, shared with the runtime (`shared_proto::fx_hash`).
pub use shared_proto::fx_hash;
