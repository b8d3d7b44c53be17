//! The part of the `irs` command that needs no LLVM (DESIGN §1, §4): running a program under
//! IRS (`service`, `launch`, `replay`, `constrain`) and the `irs run` command line
//! (`run_cli`). The `irs` binary is a light front (`src/front.rs`) that runs `irs run` from
//! here and hands every other command to `irs-full`, the binary with the LLVM pass linked in:
//! LLVM's static constructors and relocations cost about 10 ms at every start, which `irs run`
//! paid on every invocation.
//!
//! The modules' sources stay where the `irs` crate has always had them (`src/`); they are
//! compiled here once, and the `irs` crate re-exports them.

// The two LLVM-free parts of the instrumentation the service needs (is it an instrumented
// program, what is its id, where is a program in PATH), reached by their usual names.
extern crate self as irs_instrument;

#[path = "../../irs-instrument/src/instrumented_binary.rs"]
pub mod instrumented_binary;
#[path = "../../irs-instrument/src/toolchain.rs"]
pub mod toolchain;

#[path = "../../src/constrain.rs"]
pub mod constrain;
#[path = "../../src/launch.rs"]
pub mod launch;
#[path = "../../src/replay.rs"]
pub mod replay;
pub mod run_cli;
#[path = "../../src/service/mod.rs"]
pub mod service;
