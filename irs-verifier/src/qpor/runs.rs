//! Running a schedule: from `main` or the deepest paused execution whose prefix it extends,
//! walking the run as the program publishes its steps (DESIGN §7–§8), and accounting for its
//! time. A run whose schedule an earlier run made possible must be feasible: one that is not is
//! an error, never a leaf.

use super::walk::{Leaf, Walk};
use super::{Verifier, VerifyError};
use crate::executor::Execution;
use shared_proto::{Outcome, ThreadId};

/// Whether a run was cut off by the per-execution time limit or the event limit (see
/// `Verifier::run_walking`).
pub(super) fn cut_short(x: &Execution) -> bool {
    matches!(x.outcome(), Outcome::EventLimit { .. } | Outcome::Timeout { .. })
}

impl Verifier<'_> {
    /// Run `schedule`, from the deepest paused execution whose prefix it extends.
    pub(super) fn run(&mut self, schedule: &[ThreadId]) -> Result<Execution, VerifyError> {
        self.release_snapshots_off(schedule)?;
        let x = match self.snapshots.last() {
            Some((depth, snap)) => self.ex.run_from(snap, &schedule[*depth..])?,
            None => self.ex.run(schedule)?,
        };
        self.stats.runs += 1;
        self.ran(&x)?;
        Ok(x)
    }

    /// Run `schedule` as [`run`](Self::run) does, walking it as it goes: each step is walked
    /// as soon as the next one is published, on this core, while the program runs on the
    /// other. (A walk that ends early, at a sleep-set block or a redirection, lets the run
    /// finish: the server answers every request.)
    pub(super) fn run_walking(&mut self, schedule: &[ThreadId], mut w: Walk) -> Result<(Execution, Leaf), VerifyError> {
        self.release_snapshots_off(schedule)?;
        let mut run = match self.snapshots.last() {
            Some((depth, snap)) => self.ex.start_run(Some(snap), &schedule[*depth..])?,
            None => self.ex.start_run(None, schedule)?,
        };
        self.stats.runs += 1;
        // While the program runs the prefix, which the walk waits for.
        self.maybe_prune(&w);
        let mut failed = None;
        loop {
            let ended = self.ex.progress(&mut run)?;
            if failed.is_none() {
                failed = self.walk_more(&mut w, &run, ended).err();
            }
            if ended {
                break;
            }
        }
        let walked = shared_proto::explore_protocol::clock_micros(libc::CLOCK_MONOTONIC);
        let x = self.ex.finish(run)?;
        if x.ended_at > 0 {
            self.stats.walk_behind_micros += walked.saturating_sub(x.ended_at);
        }
        // An infeasible schedule first: the walk's complaint about it says less.
        self.ran(&x)?;
        if let Some(e) = failed {
            // A run cut off by the event or time limit may end at any point, also right where
            // an earlier run went on (its last step's events incomplete): an execution that did
            // not end, not a program that behaves differently.
            if !cut_short(&x) {
                if let VerifyError::Restart(_) = e {
                    // The run ended: what it found is confirmed before the exploration starts
                    // over (`start_over`), which forgets it.
                    for o in std::iter::once(x.outcome()).chain(&x.more_bugs).filter(|o| o.is_bug()) {
                        self.record(&x, o.clone());
                    }
                }
                return Err(e);
            }
            w.leaf = Some(Leaf::Maximal);
        }
        Ok((x, w.leaf.expect("a walk over an ended run ends")))
    }

    /// Walk the rest of an ended run: how the walk ends.
    pub(super) fn walk_to_end(&mut self, mut w: Walk, x: &Execution) -> Result<Leaf, VerifyError> {
        match self.walk_more(&mut w, x, true) {
            Err(_) if cut_short(x) => return Ok(Leaf::Maximal),
            r => r?,
        }
        Ok(w.leaf.expect("a walk over an ended run ends"))
    }

    /// Account for a run that ended (counted in `stats.runs` when it started).
    pub(super) fn ran(&mut self, x: &Execution) -> Result<(), VerifyError> {
        self.stats.executor_micros += x.total_micros;
        self.stats.program_micros += x.micros;
        self.stats.setup_micros += x.setup_micros;
        if let Some(made) = self.snapshot_made.take() {
            // The first run from a new snapshot waits for its worker to take its image.
            let cost = made + x.total_micros.saturating_sub(x.micros);
            self.snapshot_cost = (self.snapshot_cost + cost as f64) / 2.0;
        }
        if let Outcome::Infeasible { step, .. } = x.outcome() {
            return Err(VerifyError::Nondeterministic(format!(
                "a schedule that an earlier run made possible was infeasible at step {step} ({})",
                x.outcome()
            )));
        }
        Ok(())
    }
}
