//! The `irs` command's work, kept out of the binary: launching recorded runs and rendering
//! traces for people. The binary (`main.rs`) only parses arguments and prints.

pub mod bench_overhead;
pub mod demo;
pub mod explore;

pub mod record;
pub mod svg_plot;
pub mod trace_view;
pub mod verify;

// Compiled in `irs-service` (no LLVM), so that the light `irs` front can run them.
pub use irs_service::{constrain, launch, replay, service};
