//! A bug is a verdict only when its schedule reproduces it (DESIGN §7: an execution is a
//! function of its schedule). Before the exploration reports what it found, each bug's schedule
//! runs once more, from `main`, as `irs replay --schedule` will run it: a bug that does not
//! happen again came from something outside irs's control (or from irs itself), and is
//! reported as that, an error naming it, never as a bug of the program.

use super::report::bug_key;
use super::{VerifyError, Verifier};

impl Verifier<'_> {
    /// Run every bug's schedule again; an error for the first that does not end the same way.
    pub(super) fn confirm_bugs(&mut self) -> Result<(), VerifyError> {
        if self.bugs.is_empty() {
            return Ok(());
        }
        // From `main`: the paused executions are no longer needed.
        self.release_snapshots_off(&[])?;
        for i in 0..self.bugs.len() {
            let (key, schedule) = (bug_key(&self.bugs[i].outcome), self.bugs[i].schedule.clone());
            let x = self.ex.run(&schedule)?;
            self.stats.runs += 1;
            let again = std::iter::once(x.outcome()).chain(x.more_bugs.iter()).any(|o| bug_key(o) == key);
            if !again {
                let ended = x.outcome().to_string();
                self.ex.recycle(x);
                return Err(VerifyError::Nondeterministic(format!(
                    "an execution ended in `{key}`, but its schedule ({} steps) run once more ended in `{ended}`: not a verdict",
                    schedule.len()
                )));
            }
            self.ex.recycle(x);
        }
        Ok(())
    }
}
