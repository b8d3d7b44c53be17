//! The IRS verifier (DESIGN §7–§8). For now: the executor that drives an instrumented program's
//! fork server through controlled executions, and schedules as files.

pub mod executor;
pub mod schedule;
