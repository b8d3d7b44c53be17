//! The IRS verifier (DESIGN §7–§8): the executor that drives an instrumented program's fork
//! server through controlled executions, schedules as files, and the k-partial QPOR
//! exploration (papers 000 and 002) over the program's unfolding.
//!
//! - `executor`, `schedule`, `scratch_dir`: controlled executions of the program and the
//!   verifier's temporary directories (DESIGN §7);
//! - `qpor`: the exploration, Alg. 1 of 000 §3 with k-partial alternatives (§5), one file per
//!   concept of the algorithm;
//! - `unfolding`: the events found so far, `U`, with their trees, frontiers, causality and
//!   conflict (000 §2–3, §5.1–5.2), and the configuration `C`;
//! - `comb`, `cex`: the comb that finds alternatives (000 §5) and conflicting extensions
//!   (§5.3);
//! - `object_table`, `thread_names`, `race_free_words`, `word_readers`: what events are about
//!   (objects, stable thread names, words explored without a tree, the readers of each word
//!   whose copies make reads commute);
//! - `update_labels`: which updates are reads (a failed compare-exchange), by the value model;
//! - `memory_limit`: the verifier's own memory limit;
//! - `natural_run`, `anchor_trial`, `isolated_run`: the program's own order of events (one
//!   isolated run with real threads) to anchor published prefixes on, and which of two
//!   candidate anchors production runs pay less under.
//!
//! Only `executor`, `schedule`, `qpor`, `memory_limit` and the anchors' modules are the crate's interface; the rest is
//! the exploration's own and never used from outside.

pub mod anchor_trial;
pub(crate) mod cex;
pub(crate) mod comb;
pub mod executor;
pub mod isolated_run;
pub mod memory_limit;
pub mod natural_run;
pub(crate) mod object_table;
pub mod qpor;
pub(crate) mod race_free_words;
pub mod scratch_dir;
pub mod schedule;
pub(crate) mod thread_names;
pub(crate) mod unfolding;
pub(crate) mod update_labels;
pub(crate) mod word_readers;

/// The fast hasher, shared with the runtime (`shared_proto::fx_hash`).
pub use shared_proto::fx_hash;
