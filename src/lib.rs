//! The `irs` command's work, kept out of the binary: launching recorded runs and rendering
//! traces for people. The binary (`main.rs`) only parses arguments and prints.

pub mod bench_overhead;
pub mod constrain;
pub mod demo;
pub mod explore;
pub mod launch;

pub mod record;
pub mod replay;
pub mod service;
pub mod svg_plot;
pub mod trace_view;
pub mod verify;
