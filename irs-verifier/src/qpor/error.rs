//! Why an exploration fails: the executor's errors, a program that behaves differently under
//! one schedule (DESIGN §7: an execution is a function of its schedule), what irs does not
//! support, its own bugs, and the restart a racing race-free word asks for. An error is never a
//! verdict on the program.

use crate::executor::ExecError;

#[derive(Debug, thiserror::Error)]
pub enum VerifyError {
    #[error("{0}")]
    Exec(#[from] ExecError),
    #[error("the program behaved differently for the same schedule (nondeterminism irs cannot control, such as time, randomness or input changing between runs): {0}")]
    Nondeterministic(String),
    #[error("unsupported: {0}")]
    Unsupported(String),
    #[error("internal error (a bug in irs): {0}")]
    Internal(String),
    /// A word taken as race-free raced: the exploration starts over (`explore` never returns
    /// this).
    #[error("the exploration must start over: {0}")]
    Restart(String),
}
