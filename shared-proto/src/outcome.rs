//! How a run ended.

use serde::{Deserialize, Serialize};
use std::fmt;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum ViolationKind {
    /// A failed `assert`.
    Assert,
    /// A call to `abort`.
    Abort,
    /// A call to `reach_error` or `__VERIFIER_error`.
    ReachError,
}

impl ViolationKind {
    pub fn name(self) -> &'static str {
        match self {
            ViolationKind::Assert => "assert",
            ViolationKind::Abort => "abort",
            ViolationKind::ReachError => "reach_error",
        }
    }
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum Outcome {
    /// The process exited with this status.
    Exit(i32),
    /// The program reported a violation (and then aborted, as the plain program would).
    Violation { kind: ViolationKind, message: String },
    /// The process died of this signal.
    Signal(i32),
    /// The trace was written before the run ended (the run is still going or was cut off).
    Incomplete,
}

impl fmt::Display for Outcome {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Outcome::Exit(c) => write!(f, "exit {c}"),
            Outcome::Violation { kind, message } if message.is_empty() => {
                write!(f, "violation {}", kind.name())
            }
            Outcome::Violation { kind, message } => write!(f, "violation {}: {message}", kind.name()),
            Outcome::Signal(s) => write!(f, "signal {s}"),
            Outcome::Incomplete => write!(f, "incomplete"),
        }
    }
}
