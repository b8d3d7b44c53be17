//! The run's bookkeeping: the statistics the exploration keeps, what it tells its caller as it
//! goes (`Hooks`), the bugs and executions that did not end as it groups them, and the report it
//! ends with (DESIGN §8, the verdict). Bookkeeping only: nothing here decides what is explored.

use super::Verifier;
use crate::executor::Execution;
use shared_proto::{Outcome, ThreadId};
use std::time::Duration;

#[derive(Clone, Debug, Default)]
pub struct Stats {
    /// Runs of the program that reached a leaf of the exploration (maximal or SSB).
    pub executions: u64,
    pub ssb: u64,
    /// Maximal configurations explored (distinct traces).
    pub traces: u64,
    /// All runs, including those that only redirected a walk.
    pub runs: u64,
    /// Events in `U` now, the most ever, and ever created.
    pub events_live: usize,
    pub events_peak: usize,
    pub events_created: u64,
    /// Time spent in the executor (the program's runs, fork to answer), microseconds.
    pub executor_micros: u64,
    /// Of that, the program's own runs as the fork server timed them (its executions, the
    /// worker's restores included): the rest is transfer, decoding and the walk meanwhile.
    pub program_micros: u64,
    /// Of the program's time, the set-up of its runs: forks, or the worker's memory restores.
    pub setup_micros: u64,
    /// Paused executions made (see [`SnapshotPolicy`]).
    pub snapshots: u64,
    /// Where the verifier keeps the program waiting, microseconds: walking a run's steps after
    /// the program has ended it (the walk follows the run on this core, and catches up after
    /// its end: by how long, from the server's clock), and backtracking to the next alternative
    /// (the comb at each node, the next schedule). Pruning is done while the program runs the
    /// next prefix; whatever it takes beyond that shows in the walk behind.
    pub walk_behind_micros: u64,
    pub backtrack_micros: u64,
    pub prune_micros: u64,
    /// Memory words seen, by what the exploration found of them (see `race_free_words`):
    /// accessed in a race (or atomically), so objects with a tree of their own; and ordered by
    /// synchronisation in every explored execution. The counts of executions, traces, SSB and
    /// events are those of the last start; the times are of all of them.
    pub racy_words: usize,
    pub race_free_words: usize,
    /// Times the exploration started over because a word it had taken as race-free raced, or a
    /// thread was found to read a word after writes to it were made without its copy (see
    /// `word_readers`).
    pub restarts: u64,
    /// Reads of a word by different threads commuted to the end (reads-commute asked for, and
    /// not given up after too many readers found late).
    pub reads_commute: bool,
    /// Words that atomic blocks access and that race outside them: guarded by the blocks'
    /// object (see `race_free_words`).
    pub guarded_words: usize,
    /// Explored maximal executions in which a `__VERIFIER_assume` failed: ruled out by the
    /// program, neither bugs nor evidence of safety (counted in `traces`).
    pub discarded: u64,
    /// Executions cut at `--max-threads` (a thread about to create more threads than it may).
    pub thread_bound_cuts: u64,
    pub elapsed: Duration,
}

/// What the exploration tells its caller as it goes. Every method does nothing by default.
pub trait Hooks {
    /// Now and then, and at the end.
    fn progress(&mut self, _stats: &Stats) {}
    /// Each explored maximal execution.
    fn trace(&mut self, _schedule: &[ThreadId], _outcome: &Outcome) {}
    /// The first execution: the leftmost branch of the exploration.
    fn first(&mut self, _first: &Execution) {}
    /// Every maximal configuration that contains the first `steps` steps of the first execution
    /// has been explored, and no bug was found: that prefix is safe. Called with ever smaller
    /// `steps`, down to 0 when the exploration completes without a bug, and never again once a
    /// bug or an execution that did not end (time or event limit) is found.
    fn safe_prefix(&mut self, _steps: usize, _stats: &Stats) {}
    /// The exploration starts over, because a word it had taken as race-free raced (see
    /// `race_free_words`): the traces told so far will be told again. Safe prefixes are not:
    /// those told stay safe, and only smaller ones are told.
    fn restarted(&mut self, _why: &str) {}
}

/// No hooks.
pub struct Quiet;
impl Hooks for Quiet {}

/// A bug found: how it ended, and the schedule that reproduces it.
#[derive(Clone, Debug)]
pub struct Bug {
    pub outcome: Outcome,
    pub schedule: Vec<ThreadId>,
    /// How many explored executions ended this way.
    pub count: u64,
}

#[derive(Debug)]
pub struct Report {
    pub stats: Stats,
    pub bugs: Vec<Bug>,
    /// Why the exploration did not finish (limits), `None` when it did.
    pub stopped: Option<String>,
    /// Executions that did not end (time-outs, event limits): the exploration below them is not
    /// complete.
    pub nonterminating: Vec<Bug>,
    /// The data races found (and atomic accesses to words accessed plainly before): how each
    /// word that had been taken as race-free was found racy (see `race_free_words`).
    pub races: Vec<String>,
    /// What the exploration rests on besides the input, for the verdict to name: each a bound
    /// on the values or schedules explored (empty: every execution for the input).
    pub bounds: Vec<String>,
}

/// Group outcomes into bugs: a message is one bug whatever schedule led to it.
pub(super) fn bug_key(o: &Outcome) -> String {
    o.to_string()
}

impl Verifier<'_> {
    pub(super) fn refresh_stats(&mut self) {
        self.stats.thread_bound_cuts = self.thread_bound_cuts;
        (self.stats.racy_words, self.stats.race_free_words) = self.words.counts();
        self.stats.restarts = self.words.restarts() + self.readers.restarts();
        self.stats.reads_commute = self.readers.on();
        self.stats.guarded_words = self.words.guarded();
        self.stats.events_live = self.u.live();
        self.stats.events_peak = self.stats.events_peak.max(self.u.live());
        self.stats.events_created = self.u.created();
        self.stats.elapsed = self.started.elapsed();
    }

    pub(super) fn record(&mut self, exec: &Execution, outcome: Outcome) {
        self.record_schedule(exec.schedule(), outcome);
    }

    pub(super) fn record_schedule(&mut self, schedule: Vec<ThreadId>, outcome: Outcome) {
        let list = match &outcome {
            o if o.is_bug() => &mut self.bugs,
            Outcome::ThreadBound { .. } => {
                self.thread_bound_cuts += 1;
                return;
            }
            Outcome::Timeout { .. } | Outcome::EventLimit { .. } | Outcome::Incomplete => &mut self.nonterminating,
            _ => return,
        };
        let key = bug_key(&outcome);
        match list.iter_mut().find(|b| bug_key(&b.outcome) == key) {
            Some(b) => b.count += 1,
            None => list.push(Bug { outcome, schedule, count: 1 }),
        }
    }
}
