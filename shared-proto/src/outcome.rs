//! How a run ended.

use crate::ids::ThreadId;
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
    /// No thread can move while some have not finished (EXPLORE): who waits for what.
    Deadlock { waiting: Vec<String> },
    /// The requested schedule asked for a thread that was not enabled at step `step`.
    Infeasible { step: u32, requested: ThreadId, enabled: Vec<ThreadId> },
    /// The run exceeded its time limit and was killed.
    Timeout { millis: u64 },
    /// The run exceeded the number of events one execution may have (a program that never
    /// stops, spinning on shared memory): `events` is that limit (the explore buffer's
    /// capacity, `Capacity::DEFAULT.events`), the same for every execution that reaches it.
    EventLimit { events: u32 },
    /// The trace was written before the run ended (the run is still going or was cut off).
    Incomplete,
    /// A `__VERIFIER_assume` failed in it: an execution the program rules out, neither a bug
    /// nor evidence of safety (EXPLORE).
    Discarded,
    /// A thread was about to create its (`max`+1)-th thread under `--max-threads max`: the
    /// execution ended there (EXPLORE), a bounded cut, neither a bug nor the execution's end.
    ThreadBound { max: u32 },
}

impl Outcome {
    /// A bug found in the program: a violation, a crash or a deadlock.
    pub fn is_bug(&self) -> bool {
        matches!(self, Outcome::Violation { .. } | Outcome::Signal(_) | Outcome::Deadlock { .. })
    }
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
            Outcome::Deadlock { waiting } => write!(f, "deadlock: {}", waiting.join("; ")),
            Outcome::Infeasible { step, requested, enabled } => {
                let en: Vec<String> = enabled.iter().map(|t| t.to_string()).collect();
                write!(f, "infeasible schedule: at step {step} {requested} is not enabled (enabled: {})", if en.is_empty() { "none".to_string() } else { en.join(" ") })
            }
            Outcome::EventLimit { events } => write!(f, "stopped at the limit of {events} events per execution (a program that never stops?)"),
            Outcome::Timeout { millis } => write!(f, "timeout after {:.1} s", *millis as f64 / 1000.0),
            Outcome::Incomplete => write!(f, "incomplete"),
            Outcome::Discarded => write!(f, "discarded (an assumption failed, or a thread spins where what it read was written since)"),
            Outcome::ThreadBound { max } => write!(f, "cut at the thread bound: a thread was about to create more than {max} threads (--max-threads)"),
        }
    }
}
