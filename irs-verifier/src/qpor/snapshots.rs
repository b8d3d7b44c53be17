//! Paused executions (snapshots, DESIGN §7): where the exploration pauses a run so that the
//! runs below a backtracking point continue it instead of re-running its prefix from `main`,
//! and when that pays (ski rental). A snapshot only saves time: it never changes which schedules
//! run or what they do, and one whose prefix no longer extends the path is released.

use super::{Verifier, VerifyError};
use crate::executor::SnapshotResult;
use shared_proto::explore_protocol::MAX_SCHEDULE;
use shared_proto::ThreadId;
use std::time::Instant;

/// Paused executions kept at once (each is a process).
const MAX_SNAPSHOTS: usize = 16;
/// No execution is paused deeper than this many steps (a quarter of what a run may take).
const MAX_SNAPSHOT_DEPTH: usize = MAX_SCHEDULE / 4;

/// Where the exploration pauses an execution (a snapshot, DESIGN §7) so that the runs below a
/// backtracking point continue it instead of re-running its prefix from `main`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SnapshotPolicy {
    /// Never: every run from `main` in the persistent worker.
    Off,
    /// At every backtracking point with more than one alternative, at least this many steps
    /// below the last snapshot.
    Gap(usize),
    /// Where it has paid for itself already: at a backtracking point whose subtree has spent,
    /// re-running the prefix below the last snapshot, as much as a snapshot costs (both
    /// measured as the exploration goes). The rule of ski rental: whatever the size of the
    /// subtree, the time lost to re-running plus snapshots is at most about twice what the best
    /// choice in hindsight loses. For most programs the prefix costs microseconds and a
    /// snapshot milliseconds, and no snapshot is made.
    Auto,
}

/// A snapshot's cost before any is measured (µs: fork, the run to the pause, the worker's image,
/// the release), about what this machine takes.
pub(super) const FIRST_SNAPSHOT_COST_US: f64 = 2_000.0;

impl Verifier<'_> {
    /// Release the paused executions whose prefix `schedule` does not extend.
    pub(super) fn release_snapshots_off(&mut self, schedule: &[ThreadId]) -> Result<(), VerifyError> {
        while let Some((depth, snap)) = self.snapshots.last() {
            if *depth <= schedule.len() && snap.prefix() == &schedule[..*depth] {
                break;
            }
            let (_, snap) = self.snapshots.pop().expect("checked");
            let t = Instant::now();
            self.ex.release(snap)?;
            // A release is part of what a snapshot costs.
            self.release_cost = (self.release_cost + t.elapsed().as_micros() as f64) / 2.0;
        }
        Ok(())
    }

    /// The subtree below the current path will be explored by runs that all share its
    /// schedule: pause one execution at its end when that saves enough re-running (see
    /// [`SnapshotPolicy`]). `busy`: the node has had more than one alternative; `runs_below`:
    /// the runs its subtree has taken so far; `step_micros`: the last run's step times (µs since
    /// `main` at each decision; the path is a prefix of that run), what re-running a prefix costs.
    pub(super) fn maybe_snapshot(&mut self, busy: bool, runs_below: u64, step_micros: &[u32]) -> Result<(), VerifyError> {
        if self.opts.snapshots == SnapshotPolicy::Off {
            return Ok(());
        }
        let depth = self.path.len();
        if depth > MAX_SNAPSHOT_DEPTH {
            // Paths this long end at the event limit (a program that spins): a run paused there
            // has no room left to go on.
            return Ok(());
        }
        if !self.snapshots.is_empty() {
            let schedule: Vec<ThreadId> = self.path.iter().map(|n| n.tid).collect();
            self.release_snapshots_off(&schedule)?;
        }
        let base = self.snapshots.last().map_or(0, |(d, _)| *d);
        let wanted = match self.opts.snapshots {
            SnapshotPolicy::Off => false,
            SnapshotPolicy::Gap(gap) => busy && depth >= base + gap,
            SnapshotPolicy::Auto => {
                // What each run below re-runs from the last snapshot (or `main`) to here.
                let at = |d: usize| step_micros.get(d).copied().unwrap_or(0) as f64;
                let rerun = if base == 0 { at(depth) } else { at(depth) - at(base) };
                runs_below as f64 * rerun >= self.snapshot_cost + self.release_cost
            }
        };
        match self.snapshots_declined_from {
            Some(d) if depth >= d => return Ok(()),
            Some(_) => self.snapshots_declined_from = None,
            None => {}
        }
        if !wanted || depth <= base || self.snapshots.len() >= MAX_SNAPSHOTS {
            return Ok(());
        }
        let schedule: Vec<ThreadId> = self.path.iter().map(|n| n.tid).collect();
        let started = Instant::now();
        let made = match self.snapshots.last() {
            Some((d, snap)) => self.ex.snapshot(Some(snap), &schedule[*d..])?,
            None => self.ex.snapshot(None, &schedule)?,
        };
        self.stats.runs += 1;
        match made {
            SnapshotResult::Ready(snap) => {
                self.snapshots.push((depth, snap));
                self.stats.snapshots += 1;
                self.snapshot_made = Some(started.elapsed().as_micros() as u64);
            }
            SnapshotResult::Ended(x) => {
                return Err(VerifyError::Nondeterministic(format!("a run ended ({}) before step {depth}, where earlier runs went on", x.outcome())))
            }
            // Its file system view had changed by then, and so it has at every deeper step of
            // this path: no snapshot below it until the search backtracks above it.
            SnapshotResult::Declined => self.snapshots_declined_from = Some(self.snapshots_declined_from.map_or(depth, |d| d.min(depth))),
        }
        Ok(())
    }
}
