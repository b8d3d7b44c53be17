//! EXPLORE mode (DESIGN §6, §7): the fork server whose executions run `main` under the controlled
//! scheduler, every logical thread a fiber on a stack of its own; the persistent worker's process
//! image; the sandbox every execution runs in.

pub(crate) mod explore_server;
pub(crate) mod scheduler;
pub mod fiber;
pub mod fiber_tls;
pub(crate) mod stack_pool;
pub(crate) mod process_image;
pub(crate) mod sandbox;
