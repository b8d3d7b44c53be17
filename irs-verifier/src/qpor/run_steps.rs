//! A run as the walk reads it (DESIGN §7–§8): an ended execution, or one still running whose
//! steps the program publishes as it goes (its enabled lists decoded on demand). A view only:
//! it never asks the executor for more of the run.

use super::VerifyError;
use crate::executor::{Execution, RunInFlight};
use shared_proto::{Event, PendingOp, Step, ThreadInfo};
use std::borrow::Cow;

/// A run as the walk reads it: an ended execution, or one still running (whose enabled lists
/// are decoded on demand).
pub(super) trait RunSteps {
    fn steps(&self) -> &[Step];
    fn event_count(&self) -> usize;
    /// Events `range`, appended to `out`.
    fn events(&self, range: std::ops::Range<usize>, out: &mut Vec<Event>) -> Result<(), VerifyError>;
    fn threads(&self) -> &[ThreadInfo];
    fn enabled_len(&self, s: usize) -> usize;
    fn enabled(&self, s: usize) -> Result<Cow<'_, [PendingOp]>, VerifyError>;
    /// Once ended: the operations the threads were left blocked on.
    fn blocked(&self) -> &[PendingOp];
}

impl RunSteps for Execution {
    fn steps(&self) -> &[Step] {
        &self.trace.steps
    }
    fn event_count(&self) -> usize {
        self.trace.events.len()
    }
    fn events(&self, range: std::ops::Range<usize>, out: &mut Vec<Event>) -> Result<(), VerifyError> {
        out.extend_from_slice(&self.trace.events[range]);
        Ok(())
    }
    fn threads(&self) -> &[ThreadInfo] {
        &self.trace.threads
    }
    fn enabled_len(&self, s: usize) -> usize {
        self.trace.steps[s].enabled.len()
    }
    fn enabled(&self, s: usize) -> Result<Cow<'_, [PendingOp]>, VerifyError> {
        Ok(Cow::Borrowed(&self.trace.steps[s].enabled))
    }
    fn blocked(&self) -> &[PendingOp] {
        &self.blocked
    }
}

impl RunSteps for RunInFlight {
    fn steps(&self) -> &[Step] {
        RunInFlight::steps(self)
    }
    fn event_count(&self) -> usize {
        RunInFlight::event_count(self)
    }
    fn events(&self, range: std::ops::Range<usize>, out: &mut Vec<Event>) -> Result<(), VerifyError> {
        Ok(RunInFlight::events(self, range, out)?)
    }
    fn threads(&self) -> &[ThreadInfo] {
        RunInFlight::threads(self)
    }
    fn enabled_len(&self, s: usize) -> usize {
        RunInFlight::enabled_len(self, s)
    }
    fn enabled(&self, s: usize) -> Result<Cow<'_, [PendingOp]>, VerifyError> {
        Ok(Cow::Owned(RunInFlight::enabled(self, s)?))
    }
    fn blocked(&self) -> &[PendingOp] {
        RunInFlight::blocked(self)
    }
}
