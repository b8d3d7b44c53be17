//! The loop of Alg. 1 (000 §3) over runs: the first run is the leftmost branch; each leaf
//! (a maximal configuration, an SSB, a redirection to another enabled event, a schedule too long
//! to run) is counted and recorded, then the search backtracks to the next alternative and runs
//! it, until none is left or a limit stops it. It also starts the exploration over when a word
//! taken as race-free raced. It never decides what an alternative is (`alternatives`) nor
//! walks a run itself (`walk`).

use super::alternatives::Branch;
use super::report::{Hooks, Report};
use super::walk::{Leaf, Walk};
use super::{divergence, Verifier, VerifyError};
use crate::cex;
use crate::comb;
use crate::executor::Execution;
use crate::memory_limit::Size;
use crate::object_table::ObjClass;
use crate::thread_names::RunThreads;
use shared_proto::dependence::objects_of;
use shared_proto::equivalence::reads_only;
use crate::unfolding::{Configuration, Unfolding};
use shared_proto::explore_protocol::MAX_SCHEDULE;
use shared_proto::{EventKind, ObjectRef, Outcome};
use std::time::{Duration, Instant};

/// The bound a verdict names when the program waited on a condition variable: POSIX lets a wait
/// return without a signal, and the exploration does not explore that (docs/src/synchronisation.md).
/// Runs under irs are covered all the same: irs's own condition variables never wake spuriously.
pub const NO_SPURIOUS_WAKE_UPS: &str = "no spurious wake-ups of condition-variable waits (the C library may make one; irs's runtime never does)";

impl Verifier<'_> {
    /// The whole exploration, telling `hooks` as it goes.
    pub fn explore(mut self, hooks: &mut dyn Hooks) -> Result<Report, VerifyError> {
        self.started = Instant::now();
        self.extensions.set_limits(self.opts.time_limit.map(|t| self.started + t), self.opts.memory_limit);
        let anchor = self.opts.first_schedule.clone().unwrap_or_default();
        let first = self.run(&anchor)?;
        // The same schedule must give the same run: check once, up front.
        let again = self.run(&anchor)?;
        if let Some(how) = divergence::first_difference(&first.trace, &again.trace) {
            return Err(VerifyError::Nondeterministic(format!("two runs of the default schedule differ: {how}")));
        }
        hooks.first(&first);
        self.note_readers(&first);
        let mut first = Some(first);
        loop {
            let x = match first.take() {
                Some(x) => x,
                None => self.run(&anchor)?,
            };
            match self.explore_from(x, hooks) {
                Err(VerifyError::Restart(why)) => self.start_over(&why, hooks)?,
                Err(e) => return Err(e),
                Ok(stopped) => {
                    self.confirm_bugs()?;
                    self.refresh_stats();
                    hooks.progress(&self.stats);
                    let races = self.words.found().to_vec();
                    let mut bounds = self.bounds();
                    if self.thread_bound_cuts > 0 {
                        let max = self.ex.options().max_threads.unwrap_or(0);
                        bounds.push(format!(
                            "each thread creates at most {max} thread{} (--max-threads; {} executions were cut where a thread was about to create more)",
                            if max == 1 { "" } else { "s" },
                            self.thread_bound_cuts
                        ));
                    }
                    if self.cond_waits && !self.ex.options().spurious_wake_ups {
                        bounds.push(NO_SPURIOUS_WAKE_UPS.into());
                    }
                    return Ok(Report { stats: self.stats, bugs: self.bugs, stopped, nonterminating: self.nonterminating, races, bounds });
                }
            }
        }
    }

    /// Note the readers of every word the first run reads and the posters of every semaphore it
    /// posts and every barrier it waits at (see `word_readers`), before any
    /// write is made: a word's readers in the first run then never make the exploration start
    /// over, only readers that other runs find.
    fn note_readers(&mut self, x: &Execution) {
        if !self.readers.on() {
            return;
        }
        let mut threads = RunThreads::default();
        threads.update(&mut self.names, &x.trace.threads);
        for e in x.trace.events.iter().filter(|e| reads_only(e.kind) || e.kind.commutes_natively()) {
            for k in objects_of(e) {
                let o = self.objects.of_run(k, &threads);
                if matches!(self.objects.class(o), ObjClass::Memory | ObjClass::Native) {
                    self.readers.read(o, threads.stable(e.tid), String::new);
                    if let (EventKind::BarrierArrive, ObjectRef::Barrier { value: count, .. }) = (e.kind, e.object) {
                        if self.readers.readers(o).len() > count as usize {
                            self.readers.order(o, String::new);
                        }
                    }
                }
            }
        }
    }

    /// Forget the exploration so far (a word taken as race-free raced; `self.words` knows it
    /// now) and keep its times.
    fn start_over(&mut self, why: &str, hooks: &mut dyn Hooks) -> Result<(), VerifyError> {
        // The bugs found so far are forgotten with the rest: a deterministic program shows them
        // again, so each must reproduce now, or the program is not one (its first run may have
        // been its only bad one) and there is no verdict.
        self.confirm_bugs()?;
        self.release_snapshots_off(&[])?; // all of them
        if self.words.restart_needed().is_some() || self.readers.restart_needed().is_none() {
            self.words.restarted();
        }
        self.readers.restarted();
        if !self.bugs.is_empty() || !self.nonterminating.is_empty() || self.thread_bound_cuts > 0 {
            // What was found stays found: nothing more is told safe.
            self.told_safe = Some(0);
        }
        self.u = Unfolding::new(self.opts.skip_step);
        self.c = Configuration::default();
        self.path.clear();
        self.accesses.clear();
        self.access_undo.clear();
        self.since.clear();
        self.bugs.clear();
        self.nonterminating.clear();
        self.thread_bound_cuts = 0;
        self.last_prune_live = 0;
        self.extensions = cex::Extensions::default();
        self.extensions.set_limits(self.opts.time_limit.map(|t| self.started + t), self.opts.memory_limit);
        self.comb = comb::Comb::default();
        self.action_cache.clear();
        let s = &mut self.stats;
        (s.executions, s.ssb, s.traces, s.discarded) = (0, 0, 0, 0);
        hooks.restarted(why);
        Ok(())
    }

    /// Explore from the first run: why it stopped early, if it did.
    fn explore_from(&mut self, first: Execution, hooks: &mut dyn Hooks) -> Result<Option<String>, VerifyError> {
        let mut leftmost: Option<usize> = None;
        let mut leaf = self.walk_to_end(Walk::at(0, Vec::new(), Vec::new()), &first)?;
        let mut exec = first;
        let mut last_progress = Instant::now();
        let stopped = loop {
            match leaf {
                Leaf::Redirect { schedule, .. } if schedule.len() >= MAX_SCHEDULE => {
                    leaf = Leaf::TooLong { schedule };
                    continue;
                }
                Leaf::Redirect { schedule, from, sleep } => {
                    let (x, l) = self.run_walking(&schedule, Walk::at(from, sleep, Vec::new()))?;
                    self.ex.recycle(std::mem::replace(&mut exec, x));
                    leaf = l;
                    continue;
                }
                Leaf::TooLong { schedule } => {
                    let events = shared_proto::explore_buffer::Capacity::DEFAULT.events;
                    self.record_schedule(schedule, Outcome::EventLimit { events });
                }
                Leaf::Blocked => {
                    self.stats.executions += 1;
                    self.stats.ssb += 1;
                }
                Leaf::Maximal => {
                    self.stats.executions += 1;
                    self.stats.traces += 1;
                    let outcome = exec.outcome().clone();
                    if outcome == Outcome::Discarded {
                        self.stats.discarded += 1;
                    }
                    hooks.trace(&exec.schedule(), &outcome);
                    for more in exec.more_bugs.clone() {
                        self.record(&exec, more);
                    }
                    self.record(&exec, outcome);
                }
            }
            // The first leaf ends the leftmost branch: its nodes return from here on.
            leftmost.get_or_insert(self.path.len());
            if last_progress.elapsed() > Duration::from_millis(100) {
                self.refresh_stats();
                hooks.progress(&self.stats);
                last_progress = Instant::now();
            }
            if self.opts.first_bug && !self.bugs.is_empty() {
                break Some("stopped at the first bug (--first-bug)".to_string());
            }
            if let Some(m) = self.opts.max_executions.filter(|&m| self.stats.executions >= m) {
                break Some(format!("stopped at the limit of {m} executions"));
            }
            if let Some(t) = self.opts.time_limit.filter(|&t| self.started.elapsed() >= t || self.extensions.expired() == Some(cex::Stop::Time)) {
                break Some(format!("stopped at the time limit of {:.0} s", t.as_secs_f64()));
            }
            if let Some(m) = self.memory.as_mut() {
                if m.reached() || self.extensions.expired() == Some(cex::Stop::Memory) {
                    break Some(format!("stopped at the memory limit of {} after {} executions", Size(m.limit()), self.stats.executions));
                }
            }
            // Backtrack to the deepest node with an alternative.
            let Some(Branch { sleep: s, alternative: j, runs_below, busy }) = self.backtrack(&mut leftmost, hooks) else { break None };
            self.maybe_snapshot(busy, runs_below, &exec.step_micros)?;
            let scheduling = Instant::now();
            let schedule = self.schedule_through(&j)?;
            self.stats.backtrack_micros += scheduling.elapsed().as_micros() as u64;
            if schedule.len() >= MAX_SCHEDULE {
                leaf = Leaf::TooLong { schedule };
                continue;
            }
            let (x, l) = self.run_walking(&schedule, Walk::at(self.path.len(), s, j))?;
            self.ex.recycle(std::mem::replace(&mut exec, x));
            leaf = l;
        };
        self.release_snapshots_off(&[])?; // all of them
        Ok(stopped)
    }
}
