//! The exploration: Alg. 1 of the QPOR paper (`Explore(C, D, A)`), driven by real executions
//! (DESIGN §8). A run of the program under a schedule gives, step by step, the event it
//! performed and the operations every enabled thread was about to perform; the walk over a run
//! is the chain of recursive calls along one branch, adding `ex(C)` to `U` at every node (the
//! conflicting extensions of each new event; enabled events are only looked up, see
//! `pending_event`). Backtracking pops nodes; at
//! each, the event just explored joins the sleep set `D` and [`comb::Comb::alternative`] looks for a
//! k-partial alternative `J`; if there is one, the next run follows a linearisation of
//! `C ∪ J` and then the default policy. When a run's next event is in `D` the walk asks for
//! another enabled event (one more run), and when every enabled event is in `D` the branch is
//! sleep-set blocked (SSB). `U` is pruned to `Q_{C,D}` from time to time.
//!
//! The walk over a run overlaps the run itself: the program publishes each step in the shared
//! buffer as it decides it, and the verifier walks every step whose events are known (once the
//! next step is there) while the program goes on with the later ones on the other core
//! ([`Executor::progress`]). Only the walk's tail and the backtracking are left between two
//! runs.
//!
//! A step that accesses only race-free words (see [`crate::race_free_words`]) is no event: it
//! is a node of the path (schedules name every step) but no call of Alg. 1, and the walk only
//! checks that the word's accesses stay ordered by synchronisation.

mod confirm;
mod divergence;
mod end_cuts;
mod nondet;
mod word_checks;

use crate::cex;
use crate::comb;
use crate::sibling_marks::SiblingMarks;
use crate::configuration::Configuration;
use crate::executor::{ExecError, Execution, Executor, RunInFlight, Snapshot, SnapshotResult};
use shared_proto::explore_protocol::MAX_SCHEDULE;
use std::borrow::Cow;
use crate::memory_limit::{MemoryLimit, Size};
use crate::object_table::{ObjClass, ObjIdx, ObjectTable};
use crate::race_free_words::{RaceFreeWords, WordUse};
use crate::thread_names::{RunThreads, StableThread, ThreadNames};
use crate::unfolding::{action_kind, ActionIdx, EventIdx, Unfolding};
use shared_proto::dependence::{objects_of, ObjectKey};
use crate::fx_hash::FxHashMap;
use shared_proto::{Event, EventKind, ObjectRef, Outcome, PendingOp, Step, ThreadId, ThreadInfo};
use std::collections::HashMap;
use std::time::{Duration, Instant};

/// The skip-pointer step of the object trees (see `unfolding`).
pub const DEFAULT_SKIP_STEP: u32 = 4;
/// `U` is pruned from this many events on.
pub const DEFAULT_PRUNE_AT: usize = 2048;
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
const FIRST_SNAPSHOT_COST_US: f64 = 2_000.0;

#[derive(Clone, Debug)]
pub struct Options {
    /// `Some(k)`: k-partial alternatives; `None`: optimal.
    pub k: Option<usize>,
    pub max_executions: Option<u64>,
    pub time_limit: Option<Duration>,
    /// Skip-pointer step of the object trees.
    pub skip_step: u32,
    /// When to start runs from paused executions (snapshots) instead of from `main`.
    pub snapshots: SnapshotPolicy,
    /// The schedule of the first run, the leftmost branch (default: the default policy's).
    pub first_schedule: Option<Vec<ThreadId>>,
    /// Prune `U` to `Q_{C,D}` once it holds this many events (and has doubled since).
    pub prune_at: usize,
    /// Explore words without a tree while their accesses are ordered by synchronisation (see
    /// `race_free_words`); off: every word is an object from the start.
    pub race_free_words: bool,
    /// Stop at the first bug found (the verdict is `violation` all the same).
    pub first_bug: bool,
    /// Stop once the verifier's resident set reaches this many bytes (see `memory_limit`;
    /// checked between executions).
    pub memory_limit: Option<u64>,
}

impl Default for Options {
    fn default() -> Self {
        Options { k: None, max_executions: None, time_limit: None, skip_step: DEFAULT_SKIP_STEP, snapshots: SnapshotPolicy::Auto, first_schedule: None, prune_at: DEFAULT_PRUNE_AT, race_free_words: true, first_bug: false, memory_limit: None }
    }
}

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
    /// Times the exploration started over because a word it had taken as race-free raced.
    pub restarts: u64,
    /// Words that atomic blocks access and that race outside them: guarded by the blocks'
    /// object (see `race_free_words`).
    pub guarded_words: usize,
    /// Explored maximal executions in which a `__VERIFIER_assume` failed: ruled out by the
    /// program, neither bugs nor evidence of safety (counted in `traces`).
    pub discarded: u64,
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

struct Node {
    /// `None` for a step that is no event: an access to race-free words only (see
    /// `race_free_words`). Such a node is no call of Alg. 1: no alternative, an empty `sleep`.
    event: Option<EventIdx>,
    tid: ThreadId,
    /// The step's action (for a step that is no event, what it accessed).
    action: ActionIdx,
    /// For a kill: what the thread it cuts off was about to do (see `Verifier::cut_at_end`).
    cut: Option<PendingOp>,
    /// The length of `Verifier::access_undo` before the node's accesses were recorded, and the
    /// thread's count of steps since its last event before the node (see `Verifier::since`).
    access_mark: usize,
    since_before: u32,
    sleep: Vec<EventIdx>,
    /// `stats.runs` when the node was entered: the runs since explored its subtree.
    runs_at: u64,
    /// What the prunes since the node was entered found at it.
    marks: Option<SiblingMarks>,
}

enum Leaf {
    Maximal,
    Blocked,
    /// Run again with this schedule and walk on from node `from` with sleep set `sleep`.
    Redirect { schedule: Vec<ThreadId>, from: usize, sleep: Vec<EventIdx> },
    /// The schedule to run is longer than a run may be (past the event limit: a program that
    /// spins): an execution that does not end, recorded as such, not run.
    TooLong { schedule: Vec<ThreadId> },
}

/// A run as the walk reads it: an ended execution, or one still running (whose enabled lists
/// are decoded on demand).
trait RunSteps {
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

/// Where a walk over one run stands (see [`Verifier::walk_more`]): it goes on as the run
/// publishes its steps.
struct Walk {
    /// The next step to walk.
    s: usize,
    sleep: Vec<EventIdx>,
    /// The alternative's events the run is to perform first (in any order).
    follow: Vec<EventIdx>,
    threads: RunThreads,
    /// How the walk ended, once it has.
    leaf: Option<Leaf>,
}

impl Walk {
    fn at(s: usize, sleep: Vec<EventIdx>, follow: Vec<EventIdx>) -> Walk {
        Walk { s, sleep, follow, threads: RunThreads::default(), leaf: None }
    }
}

pub struct Verifier<'a> {
    ex: &'a mut Executor,
    opts: Options,
    u: Unfolding,
    objects: ObjectTable,
    names: ThreadNames,
    c: Configuration,
    path: Vec<Node>,
    stats: Stats,
    bugs: Vec<Bug>,
    nonterminating: Vec<Bug>,
    started: Instant,
    last_prune_live: usize,
    /// Paused executions along the current path, shallowest first: (steps, snapshot).
    snapshots: Vec<(usize, Snapshot)>,
    /// What a snapshot costs (µs, a running average of those measured) and, when one was just
    /// made, what making it took so far (its first run adds the wait for the worker's image).
    snapshot_cost: f64,
    snapshot_made: Option<u64>,
    /// A snapshot was declined at this depth of the current path (its execution had changed
    /// its file system view): none is asked for at or below it on this path.
    snapshots_declined_from: Option<usize>,
    /// What releasing one costs (µs, a running average).
    release_cost: f64,
    /// Scratch buffers of `action_for` and `at_c` (reused: they run for every enabled thread at
    /// every step).
    objs_buf: Vec<ObjIdx>,
    elided_buf: Vec<ObjIdx>,
    preds_buf: Vec<Option<EventIdx>>,
    extensions: cex::Extensions,
    comb: comb::Comb,
    /// The sleep set a backtracking node searches with (reused).
    sleep_buf: Vec<EventIdx>,
    /// The events of the step the walk is at (reused).
    events_buf: Vec<Event>,
    /// Which words are explored without a tree (kept across restarts).
    words: RaceFreeWords,
    /// Per race-free word (by object index), its last access in the path: by the thread whose
    /// object is the first, before that thread's event at the depth the second gives in its
    /// tree (see `record_accesses`), and whether it writes; undone on backtracking through
    /// `access_undo`.
    accesses: Vec<Option<LastAccess>>,
    access_undo: Vec<(ObjIdx, Option<LastAccess>)>,
    /// Per runtime thread id, the steps it has taken in the path since its last event (steps
    /// that are no events: accesses to race-free words).
    since: Vec<u32>,
    /// The smallest safe prefix told (`Hooks::safe_prefix`), across restarts.
    told_safe: Option<usize>,
    /// The actions of single-object operations (see `action_for`).
    action_cache: FxHashMap<(StableThread, Option<shared_proto::SiteId>, EventKind, ObjectKey), (ActionIdx, ObjIdx)>,
    /// The race-free words of the last atomic block `action_for` saw (not part of its action).
    block_words: Vec<ObjIdx>,
    /// Per object, whether it is a word made racy by unordered reads only (no data race, not
    /// reported): its accesses, events now, are still checked for a data race, which is
    /// reported once (see `check_watched`). Kept across restarts, as the objects are.
    watched: Vec<bool>,
    /// Nondet calls seen: the function (as the site table names the call) and how many values it
    /// took, for the verdict's bounds.
    nondet_seen: std::collections::BTreeMap<String, u32>,
    memory: Option<MemoryLimit>,
}

/// The last access to a race-free word in the path: by the thread whose object is the first,
/// before its event at the depth the second gives; whether it writes.
type LastAccess = (ObjIdx, u32, bool);

/// Whether a run was cut off by the per-execution time limit or the event limit (see
/// `Verifier::run_walking`).
fn cut_short(x: &Execution) -> bool {
    matches!(x.outcome(), Outcome::EventLimit { .. } | Outcome::Timeout { .. })
}

/// A pending operation as the event it would be (its `k` does not matter here).
fn as_event(op: &PendingOp) -> Event {
    Event { tid: op.tid, k: 0, site: op.site, kind: op.kind, object: op.object }
}

/// " at FILE:LINE:COL (what it accesses)" for a site of the program, for people; empty if
/// unknown.
fn site_text(ex: &Executor, site: Option<shared_proto::SiteId>) -> String {
    let info = site.and_then(|id| ex.hello().sites.iter().find(|(i, _)| *i == id));
    info.map(|(_, info)| format!(" at {} ({})", info.location(), info.target)).unwrap_or_default()
}

/// Group outcomes into bugs: a message is one bug whatever schedule led to it.
fn bug_key(o: &Outcome) -> String {
    o.to_string()
}

impl<'a> Verifier<'a> {
    pub fn new(ex: &'a mut Executor, opts: Options) -> Verifier<'a> {
        let (skip, opts_race_free) = (opts.skip_step, opts.race_free_words);
        let memory = opts.memory_limit.map(MemoryLimit::new);
        Verifier {
            ex,
            opts,
            u: Unfolding::new(skip),
            objects: ObjectTable::default(),
            names: ThreadNames::default(),
            c: Configuration::default(),
            path: Vec::new(),
            stats: Stats::default(),
            bugs: Vec::new(),
            nonterminating: Vec::new(),
            started: Instant::now(),
            last_prune_live: 0,
            snapshots: Vec::new(),
            snapshot_cost: FIRST_SNAPSHOT_COST_US,
            snapshot_made: None,
            snapshots_declined_from: None,
            release_cost: 0.0,
            objs_buf: Vec::new(),
            elided_buf: Vec::new(),
            preds_buf: Vec::new(),
            extensions: cex::Extensions::default(),
            comb: comb::Comb::default(),
            sleep_buf: Vec::new(),
            events_buf: Vec::new(),
            words: RaceFreeWords::new(opts_race_free),
            accesses: Vec::new(),
            access_undo: Vec::new(),
            since: Vec::new(),
            told_safe: None,
            action_cache: FxHashMap::default(),
            block_words: Vec::new(),
            watched: Vec::new(),
            nondet_seen: Default::default(),
            memory,
        }
    }

    /// Release the paused executions whose prefix `schedule` does not extend.
    fn release_snapshots_off(&mut self, schedule: &[ThreadId]) -> Result<(), VerifyError> {
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

    /// Run `schedule`, from the deepest paused execution whose prefix it extends.
    fn run(&mut self, schedule: &[ThreadId]) -> Result<Execution, VerifyError> {
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
    fn run_walking(&mut self, schedule: &[ThreadId], mut w: Walk) -> Result<(Execution, Leaf), VerifyError> {
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
                return Err(e);
            }
            w.leaf = Some(Leaf::Maximal);
        }
        Ok((x, w.leaf.expect("a walk over an ended run ends")))
    }

    /// Walk the rest of an ended run: how the walk ends.
    fn walk_to_end(&mut self, mut w: Walk, x: &Execution) -> Result<Leaf, VerifyError> {
        match self.walk_more(&mut w, x, true) {
            Err(_) if cut_short(x) => return Ok(Leaf::Maximal),
            r => r?,
        }
        Ok(w.leaf.expect("a walk over an ended run ends"))
    }

    /// Account for a run that ended (counted in `stats.runs` when it started).
    fn ran(&mut self, x: &Execution) -> Result<(), VerifyError> {
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

    /// The whole exploration, telling `hooks` as it goes.
    pub fn explore(mut self, hooks: &mut dyn Hooks) -> Result<Report, VerifyError> {
        self.started = Instant::now();
        let anchor = self.opts.first_schedule.clone().unwrap_or_default();
        let first = self.run(&anchor)?;
        // The same schedule must give the same run: check once, up front.
        let again = self.run(&anchor)?;
        if let Some(how) = divergence::first_difference(&first.trace, &again.trace) {
            return Err(VerifyError::Nondeterministic(format!("two runs of the default schedule differ: {how}")));
        }
        hooks.first(&first);
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
                    let bounds = self.bounds();
                    return Ok(Report { stats: self.stats, bugs: self.bugs, stopped, nonterminating: self.nonterminating, races, bounds });
                }
            }
        }
    }

    /// Forget the exploration so far (a word taken as race-free raced; `self.words` knows it
    /// now) and keep its times.
    fn start_over(&mut self, why: &str, hooks: &mut dyn Hooks) -> Result<(), VerifyError> {
        self.release_snapshots_off(&[])?; // all of them
        self.words.restarted();
        if !self.bugs.is_empty() || !self.nonterminating.is_empty() {
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
        self.last_prune_live = 0;
        self.extensions = cex::Extensions::default();
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
            if let Some(t) = self.opts.time_limit.filter(|&t| self.started.elapsed() >= t) {
                break Some(format!("stopped at the time limit of {:.0} s", t.as_secs_f64()));
            }
            if let Some(m) = self.memory.as_mut() {
                if m.reached() {
                    break Some(format!("stopped at the memory limit of {} after {} executions", Size(m.limit()), self.stats.executions));
                }
            }
            // Backtrack to the deepest node with an alternative.
            let backtracking = Instant::now();
            let mut next = None;
            let mut busy = false;
            while let Some(node) = self.path.pop() {
                self.undo_accesses(&node);
                if let Some(event) = node.event {
                    self.c.pop();
                    // D ∪ {e}, in a buffer kept across nodes (most find no alternative).
                    let mut d = std::mem::take(&mut self.sleep_buf);
                    d.clear();
                    d.extend_from_slice(&node.sleep);
                    d.push(event);
                    if let Some(j) = self.comb.alternative(&self.u, &self.objects, &self.c, &d, self.opts.k) {
                        busy = d.len() >= 2;
                        next = Some((d, j, self.stats.runs - node.runs_at));
                        break;
                    }
                    self.sleep_buf = d;
                }
                // `Explore(C_i, ...)` returned. On the leftmost branch (D = ∅ there) every
                // maximal configuration containing C_i has been explored, all of them since the
                // first run: C_i is safe if no bug was found yet (DESIGN §8, publishing).
                // An execution that did not end (time or event limit) leaves its subtree
                // unexplored beyond it: nothing above it is proven safe either.
                let i = self.path.len();
                if leftmost.is_some_and(|b| i < b) && self.bugs.is_empty() && self.nonterminating.is_empty() {
                    leftmost = Some(i);
                    if self.told_safe.is_none_or(|t| i < t) {
                        self.told_safe = Some(i);
                        self.refresh_stats();
                        hooks.safe_prefix(i, &self.stats);
                    }
                }
            }
            self.stats.backtrack_micros += backtracking.elapsed().as_micros() as u64;
            let Some((s, j, runs_below)) = next else { break None };
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

    /// The subtree below the current path will be explored by runs that all share its
    /// schedule: pause one execution at its end when that saves enough re-running (see
    /// [`SnapshotPolicy`]). `busy`: the node has had more than one alternative; `runs_below`:
    /// the runs its subtree has taken so far; `step_micros`: the last run's step times (µs since
    /// `main` at each decision; the path is a prefix of that run), what re-running a prefix costs.
    fn maybe_snapshot(&mut self, busy: bool, runs_below: u64, step_micros: &[u32]) -> Result<(), VerifyError> {
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

    fn refresh_stats(&mut self) {
        (self.stats.racy_words, self.stats.race_free_words) = self.words.counts();
        self.stats.restarts = self.words.restarts();
        self.stats.guarded_words = self.words.guarded();
        self.stats.events_live = self.u.live();
        self.stats.events_peak = self.stats.events_peak.max(self.u.live());
        self.stats.events_created = self.u.created();
        self.stats.elapsed = self.started.elapsed();
    }

    fn record(&mut self, exec: &Execution, outcome: Outcome) {
        self.record_schedule(exec.schedule(), outcome);
    }

    fn record_schedule(&mut self, schedule: Vec<ThreadId>, outcome: Outcome) {
        let list = match &outcome {
            o if o.is_bug() => &mut self.bugs,
            Outcome::Timeout { .. } | Outcome::EventLimit { .. } | Outcome::Incomplete => &mut self.nonterminating,
            _ => return,
        };
        let key = bug_key(&outcome);
        match list.iter_mut().find(|b| bug_key(&b.outcome) == key) {
            Some(b) => b.count += 1,
            None => list.push(Bug { outcome, schedule, count: 1 }),
        }
    }

    /// The schedule of the current path followed by `extra` (events outside `C`, causes first).
    fn schedule_through(&self, extra: &[EventIdx]) -> Result<Vec<ThreadId>, VerifyError> {
        let mut runtime: HashMap<StableThread, ThreadId> = HashMap::new();
        runtime.insert(StableThread(0), ThreadId(0));
        let mut next = 1u32;
        let mut created = |u: &Unfolding, objects: &ObjectTable, e: EventIdx, runtime: &mut HashMap<StableThread, ThreadId>| {
            if u.event_kind(e) == EventKind::Create {
                let me = u.thread(e);
                for &o in u.objects(e) {
                    if let Some(t) = objects.thread_of(o).filter(|&t| t != me) {
                        runtime.insert(t, ThreadId(next));
                        next += 1;
                    }
                }
            }
        };
        let mut out = Vec::with_capacity(self.path.len() + extra.len());
        for n in &self.path {
            out.push(n.tid);
            if let Some(e) = n.event {
                created(&self.u, &self.objects, e, &mut runtime);
            }
        }
        // Each event after the steps its thread takes before it that are no events, less those
        // the path has taken already for its first one.
        let mut taken: HashMap<ThreadId, u32> = HashMap::new();
        for &e in extra {
            let t = self.u.thread(e);
            let Some(&rt) = runtime.get(&t) else {
                return Err(VerifyError::Internal(format!("an alternative has an event of {t:?} before its creation")));
            };
            let done = taken.insert(rt, 0).unwrap_or_else(|| self.since.get(rt.0 as usize).copied().unwrap_or(0));
            let Some(before) = self.u.gap(e).checked_sub(done) else {
                return Err(VerifyError::Internal(format!("an alternative's event of {t:?} comes {} steps after its predecessor, the path has taken {done}", self.u.gap(e))));
            };
            out.extend(std::iter::repeat_n(rt, before as usize));
            out.push(rt.with_choice(self.u.action_of(e).choice));
            created(&self.u, &self.objects, e, &mut runtime);
        }
        Ok(out)
    }

    /// The action of thread `tid` performing `events` (one operation), and the thread's own
    /// object.
    fn action_for(&mut self, threads: &RunThreads, tid: ThreadId, site: Option<shared_proto::SiteId>, kind: EventKind, events: &[Event]) -> (ActionIdx, ObjIdx) {
        let me = threads.stable(tid);
        // Most operations are one event on one object: then the action is a function of the
        // thread, the site, the kind and that object, looked up at once.
        let single = match events {
            [e] if kind != EventKind::Create => {
                let mut keys = objects_of(e);
                match (keys.next(), keys.next()) {
                    (Some(k), None) => Some((me, site, action_kind(kind), crate::object_table::stable(k, threads))),
                    _ => None,
                }
            }
            _ => None,
        };
        if let Some(hit) = single.and_then(|k| self.action_cache.get(&k)) {
            return *hit;
        }
        let own = self.objects.thread(me);
        let mut objs = std::mem::take(&mut self.objs_buf);
        let mut elided = std::mem::take(&mut self.elided_buf);
        objs.clear();
        elided.clear();
        objs.push(own);
        // An atomic block is one event of its thread and the blocks' object: its accesses'
        // words are never its objects (see `race_free_words`).
        let in_block = kind == EventKind::Atomic;
        let mut choice = 0;
        if kind == EventKind::Create {
            // The child is "the n-th thread `me` creates": runtime ids depend on what other
            // threads created first, and a pending create's id may not be the final one.
            let nth = self.path.iter().filter_map(|n| n.event).filter(|&e| self.u.event_kind(e) == EventKind::Create && self.u.thread(e) == me).count();
            let child = self.names.intern(Some(me), nth as u32);
            objs.push(self.objects.thread(child));
        } else {
            for e in events {
                if let (EventKind::Nondet, ObjectRef::Choice { value, .. }) = (e.kind, e.object) {
                    choice = value;
                }
                for k in objects_of(e) {
                    let o = self.objects.of_run(k, threads);
                    if self.objects.class(o) != ObjClass::Memory {
                        objs.push(o);
                        continue;
                    }
                    match self.words.classify(self.objects.key(o), e.kind, in_block, || site_text(self.ex, e.site)) {
                        WordUse::Elided => elided.push(o),
                        WordUse::Object => objs.push(o),
                        WordUse::Guarded => objs.push(self.objects.atomic()),
                    }
                }
            }
        }
        objs.sort_unstable();
        objs.dedup();
        elided.sort_unstable();
        elided.dedup();
        // A word both elided and not (a memcpy whose two halves are a plain and an atomic
        // access) is an object; the restart this asks for follows.
        elided.retain(|o| objs.binary_search(o).is_err());
        if in_block {
            // The block's race-free words are checked (`record_accesses`), but what the block
            // accesses depends on what it reads, and a block moved before another reads other
            // values: they are not part of what the action is.
            self.block_words.clear();
            self.block_words.extend_from_slice(&elided);
            elided.clear();
        }
        let a = self.u.intern_action(me, own, site, action_kind(kind), &objs, &elided, choice);
        self.objs_buf = objs;
        self.elided_buf = elided;
        if let Some(k) = single {
            self.action_cache.insert(k, (a, own));
        }
        (a, own)
    }

    /// The event a thread about to perform `op` would be at `C`, if `U` has it. Only events of
    /// `U` can be in a sleep set, which is all the walk asks of the enabled events; so they are
    /// looked up, not added (Alg. 1 adds `en(C)` to `U`: an enabled event that conflicts with
    /// the one explored is added anyway as a conflicting extension of the thread's later event,
    /// and the others would only lengthen the object trees' sibling lists the comb searches).
    fn pending_event(&mut self, threads: &RunThreads, op: &PendingOp) -> Option<EventIdx> {
        let ev = as_event(op);
        let (a, _) = self.action_for(threads, op.tid, op.site, op.kind, &[ev]);
        if self.no_event(a) {
            return None;
        }
        self.at_c(a, op.kind);
        self.u.find(a, &self.preds_buf)
    }

    /// The first of the enabled operations whose event at `C` is not in the sleep set, as a
    /// schedule's entry: its thread, and for a nondet call the first value whose event is not.
    fn first_awake(&mut self, threads: &RunThreads, enabled: &[PendingOp], sleep: &[EventIdx]) -> Option<ThreadId> {
        for op in enabled {
            let choices = match op.object {
                ObjectRef::Choice { of, .. } if op.kind == EventKind::Nondet => of.max(1),
                _ => 1,
            };
            for v in 0..choices {
                let mut op = *op;
                if choices > 1 {
                    op.object = ObjectRef::Choice { value: v, of: choices };
                }
                if !self.pending_event(threads, &op).is_some_and(|x| sleep.contains(&x)) {
                    return Some(op.tid.with_choice(v));
                }
            }
        }
        None
    }

    /// The action's predecessors at `C` (into `preds_buf`), and its kind there (a trylock fails
    /// where the mutex is held).
    fn at_c(&mut self, a: ActionIdx, kind: EventKind) -> EventKind {
        self.preds_buf.clear();
        for &o in self.u.actions(a).objects.iter() {
            self.preds_buf.push(self.c.last(o));
        }
        match kind {
            EventKind::TryLock | EventKind::TryLockFail => {
                let m = self.u.actions(a).objects.iter().copied().find(|&o| self.objects.class(o) == crate::object_table::ObjClass::Mutex);
                match m {
                    Some(m) if !cex::mutex_free_after(&self.u, m, self.c.last(m)) => EventKind::TryLockFail,
                    _ => EventKind::TryLock,
                }
            }
            k => k,
        }
    }

    /// The event of action `a` at `C` (whether it is new), created with `gap` if it is.
    fn event_at_c(&mut self, a: ActionIdx, kind: EventKind, gap: u32) -> (EventIdx, bool) {
        let kind = self.at_c(a, kind);
        self.u.event(a, &self.preds_buf, kind, gap)
    }

    /// Whether a step of action `a` is no event: an access to race-free words only.
    fn no_event(&self, a: ActionIdx) -> bool {
        let a = self.u.actions(a);
        a.objects.len() == 1 && !a.elided.is_empty()
    }

    /// Walk a run on from step `w.s` (the path holds nodes `0..w.s`, `C` their events): the
    /// recursive calls of Alg. 1 along it. `steps`, `events` and `threads` are the run's so far;
    /// `ended`: the run has ended. A step is walked once its events are all known: once the next
    /// step is there, or the run has ended.
    fn walk_more(&mut self, w: &mut Walk, run: &dyn RunSteps, ended: bool) -> Result<(), VerifyError> {
        let mut events = std::mem::take(&mut self.events_buf);
        let walked = self.walk_steps(w, run, ended, &mut events);
        self.events_buf = events;
        walked
    }

    /// [`walk_more`](Self::walk_more), with a buffer for each step's events.
    fn walk_steps(&mut self, w: &mut Walk, run: &dyn RunSteps, ended: bool, done: &mut Vec<Event>) -> Result<(), VerifyError> {
        if w.leaf.is_some() {
            return Ok(());
        }
        debug_assert_eq!(self.path.len(), w.s);
        let (steps, n_events) = (run.steps(), run.event_count());
        w.threads.update(&mut self.names, run.threads());
        while w.s < steps.len() && (ended || w.s + 1 < steps.len()) {
            let s = w.s;
            let step = &steps[s];
            let first = step.first_event as usize;
            let end = steps.get(s + 1).map_or(n_events, |n| n.first_event as usize).min(n_events);
            // A thread that crashed performing its operation left no event: the operation, as
            // it was pending, is its last event (it halts there).
            done.clear();
            if first < end {
                run.events(first..end, done)?;
            } else {
                let Some(op) = run.enabled(s)?.iter().find(|op| op.tid == step.chosen).copied() else {
                    return Err(VerifyError::Internal(format!("step {s} chose a thread that was not enabled")));
                };
                done.push(as_event(&op));
            }
            let done = &done[..];
            let (action, own) = self.action_for(&w.threads, step.chosen, done[0].site, done[0].kind, done);
            let block_words = if done[0].kind == EventKind::Atomic { std::mem::take(&mut self.block_words) } else { Vec::new() };
            if let (EventKind::Kill, ObjectRef::Thread(victim)) = (done[0].kind, done[0].object) {
                self.cut_off(&w.threads, run, s, victim)?;
            }
            let tid = step.chosen.0 as usize;
            if self.since.len() <= tid {
                self.since.resize(tid + 1, 0);
            }
            let (access_mark, since_before) = (self.access_undo.len(), self.since[tid]);
            // An access to race-free words only is no event, and no call of Alg. 1 (nothing can
            // be reordered with it, so it has no alternative and changes no sleep set).
            let event = match self.no_event(action) {
                true => None,
                false => {
                    let (e, new) = self.event_at_c(action, done[0].kind, since_before);
                    if !new && self.u.gap(e) != since_before {
                        return Err(VerifyError::Nondeterministic(format!(
                            "at step {s}, T{} took {since_before} unsynchronised steps before an event where an earlier run took {}",
                            step.chosen.0,
                            self.u.gap(e)
                        )));
                    }
                    Some(e)
                }
            };
            if let Some(e) = event.filter(|_| !self.watched.is_empty()) {
                self.check_watched(action, e, own, s, step.chosen);
            }
            if let (Some(e), EventKind::Nondet, ObjectRef::Choice { of, .. }) = (event, done[0].kind, done[0].object) {
                self.nondet_siblings(e, of, since_before);
            }
            if !self.u.actions(action).elided.is_empty() || !block_words.is_empty() {
                // The access's history, and the depth of its thread's event that follows it.
                let (q, after) = match event {
                    Some(e) => (Some(e), self.u.depth_on(Some(e), own)),
                    None => (self.c.last(own), self.u.depth_on(self.c.last(own), own) + 1),
                };
                self.record_accesses(action, &block_words, own, q, after, s, step.chosen);
            }
            self.block_words = block_words;
            if let Some(why) = self.words.restart_needed() {
                return Err(VerifyError::Restart(why.to_string()));
            }
            let Some(e) = event else {
                self.path.push(Node { event: None, tid: step.chosen, action, cut: None, access_mark, since_before, sleep: Vec::new(), runs_at: self.stats.runs, marks: None });
                self.since[tid] += 1;
                w.s += 1;
                continue;
            };
            // Line 5 of Alg. 1: en(C) ⊆ D (impossible while D has fewer events than en(C), and
            // most of the time D is empty: then no enabled event needs to be looked up).
            if run.enabled_len(s) <= w.sleep.len() && self.first_awake(&w.threads, &run.enabled(s)?, &w.sleep).is_none() {
                w.leaf = Some(Leaf::Blocked);
                return Ok(());
            }
            if !w.follow.is_empty() {
                match w.follow.iter().position(|&x| x == e) {
                    Some(i) => {
                        w.follow.remove(i);
                    }
                    // A memcpy between two shared objects is one operation whose pending op
                    // showed only its first half: the prediction can miss the second.
                    None if end - first > 1 => {
                        return Err(VerifyError::Unsupported(format!(
                            "step {s} copies between two shared objects in one operation (a memcpy or struct assignment); irs cannot reorder around it yet"
                        )))
                    }
                    None => {
                        let me = self.u.thread(e);
                        let predicted = w.follow.iter().find(|&&f| self.u.thread(f) == me).map(|&f| {
                            let a = self.u.action_of(f);
                            let keys: Vec<_> = a.objects.iter().chain(a.elided.iter()).map(|&o| self.objects.key(o)).collect();
                            divergence::describe_predicted(self.ex.hello(), a.kind, a.site, &keys)
                        });
                        return Err(VerifyError::Nondeterministic(format!(
                            "at step {s}, this run did {} where an earlier run predicted {}",
                            divergence::describe_event(self.ex.hello(), &done[0]),
                            predicted.map_or_else(|| "another event".to_string(), |p| format!("T{} {p}", step.chosen.0))
                        )))
                    }
                }
            } else if w.sleep.contains(&e) {
                // Line 7 of Alg. 1: choose from en(C) \ D.
                let leaf = match self.first_awake(&w.threads, &run.enabled(s)?, &w.sleep) {
                    None => Leaf::Blocked,
                    Some(entry) => {
                        let mut schedule: Vec<ThreadId> = self.path.iter().map(|n| n.tid).collect();
                        schedule.push(entry);
                        Leaf::Redirect { schedule, from: s, sleep: std::mem::take(&mut w.sleep) }
                    }
                };
                w.leaf = Some(leaf);
                return Ok(());
            }
            let cut = if done[0].kind == EventKind::Kill { step.cut } else { None };
            self.path.push(Node { event: Some(e), tid: step.entry(), action, cut, access_mark, since_before, sleep: w.sleep.clone(), runs_at: self.stats.runs, marks: None });
            self.since[tid] = 0;
            self.c.push(&self.u, e);
            self.extensions.of_event(&mut self.u, &self.objects, e, own);
            if !w.sleep.is_empty() {
                let objs = self.u.objects(e);
                w.sleep.retain(|&d| self.u.objects(d).iter().all(|o| !objs.contains(o)));
            }
            w.s += 1;
        }
        if !ended {
            return Ok(());
        }
        if !w.follow.is_empty() {
            return Err(VerifyError::Nondeterministic("a run ended before the events an earlier run predicted".into()));
        }
        for op in run.blocked() {
            let ev = as_event(op);
            let (a, own) = self.action_for(&w.threads, op.tid, op.site, op.kind, &[ev]);
            if self.no_event(a) {
                continue;
            }
            let preds: Vec<Option<EventIdx>> = self.u.actions(a).objects.iter().map(|&o| self.c.last(o)).collect();
            let gap = self.since.get(op.tid.0 as usize).copied().unwrap_or(0);
            self.extensions.of_blocked(&mut self.u, &self.objects, a, op.kind, &preds, own, gap);
        }
        self.cut_at_end(&w.threads);
        w.leaf = Some(Leaf::Maximal);
        Ok(())
    }

    /// Undo what a node popped from the path recorded: its accesses, and its thread's count of
    /// steps since its last event.
    fn undo_accesses(&mut self, node: &Node) {
        while self.access_undo.len() > node.access_mark {
            let (x, prev) = self.access_undo.pop().expect("above the mark");
            self.accesses[x.0 as usize] = prev;
        }
        self.since[node.tid.index()] = node.since_before;
    }

    /// Line 13 of Alg. 1, amortised: when `U` has doubled since the last time, keep only
    /// `Q_{C,D}`: the events of `C` and of the sleep sets along the path, the events in
    /// immediate conflict with any of them that alternatives can be built from (their siblings
    /// of other threads in the memory and mutex trees, see `comb`), and the histories of all
    /// these. Anything else a later branch needs, its own runs find again.
    ///
    /// Called as a run starts (the verifier waits for its prefix meanwhile), with the walk it
    /// begins: its sleep set is the next node's `D`, anchored at that node, and the events it
    /// is to follow are kept with their histories.
    fn maybe_prune(&mut self, w: &Walk) {
        let live = self.u.live();
        if live < self.opts.prune_at || live < 2 * self.last_prune_live {
            return;
        }
        let pruning = Instant::now();
        // Each anchor with the depth of the first node whose `D` or event it is: its siblings
        // serve alternatives only at that node or deeper, against configurations that contain
        // `C` up to there, so a sibling in conflict with that prefix never serves (the comb
        // skips it) and is not kept. (The paper keeps every immediate conflict; this keeps those
        // the comb can still use, which is what bounds the siblings it searches.)
        // The siblings found at a node are remembered while it stays on the path (its prefix
        // does not change; see `sibling_marks`).
        let mut seen: std::collections::HashSet<EventIdx> = std::collections::HashSet::new();
        let mut keep = vec![false; self.u.capacity()];
        let mut stack: Vec<EventIdx> = Vec::new();
        let mark = |x: EventIdx, keep: &mut Vec<bool>, stack: &mut Vec<EventIdx>| {
            if !keep[x.0 as usize] {
                keep[x.0 as usize] = true;
                stack.push(x);
            }
        };
        let mut prefix = Configuration::default();
        let mut anchors = Vec::new();
        for level in 0..=self.path.len() {
            anchors.clear();
            let node = self.path.get_mut(level);
            let candidates = node.as_ref().map_or(&w.sleep[..], |n| &n.sleep[..]).iter().chain(node.as_ref().and_then(|n| n.event.as_ref()));
            anchors.extend(candidates.copied().filter(|&d| seen.insert(d)));
            for &a in &anchors {
                mark(a, &mut keep, &mut stack);
            }
            let (u, objects) = (&self.u, &self.objects);
            let mut fresh = None;
            let marks = match node {
                Some(n) => n.marks.get_or_insert_with(|| SiblingMarks::new(u, objects, &anchors)),
                None => fresh.insert(SiblingMarks::new(u, objects, &anchors)),
            };
            // Closed under causality with the prefix, which is marked already: no walk up.
            marks.scan(u, &prefix, |x| keep[x.0 as usize] = true);
            if let Some(e) = self.path.get(level).and_then(|n| n.event) {
                prefix.push(&self.u, e);
            }
        }
        for &j in &w.follow {
            mark(j, &mut keep, &mut stack);
        }
        // Close under causality.
        while let Some(x) = stack.pop() {
            for (_, p) in self.u.preds(x) {
                if let Some(p) = p {
                    mark(p, &mut keep, &mut stack);
                }
            }
        }
        self.refresh_stats();
        self.u.retain(&keep);
        for m in self.path.iter_mut().filter_map(|n| n.marks.as_mut()) {
            m.pruned(&self.u);
        }
        self.last_prune_live = self.u.live();
        self.stats.prune_micros += pruning.elapsed().as_micros() as u64;
    }
}
