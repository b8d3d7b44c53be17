//! The exploration: Alg. 1 of the QPOR paper (000 §3, `Explore(C, D, A)`), driven by real
//! executions (DESIGN §8). A run of the program under a schedule gives, step by step, the event
//! it performed and the operations every enabled thread was about to perform; the walk over a
//! run is the chain of recursive calls along one branch, adding `ex(C)` to `U` at every node
//! (the conflicting extensions of each new event; enabled events are only looked up, see
//! `sleep_sets`). Backtracking pops nodes; at each, the event just explored joins the sleep set
//! `D` and [`comb::Comb::alternative`] looks for a k-partial alternative `J` (000 §5); if there
//! is one, the next run follows a linearisation of `C ∪ J` and then the default policy. When a
//! run's next event is in `D` the walk asks for another enabled event (one more run), and when
//! every enabled event is in `D` the branch is sleep-set blocked (SSB). `U` is pruned to
//! `Q_{C,D}` from time to time.
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
//!
//! This module holds the verifier's state (`U`, `C`, the path of nodes and what the walk keeps
//! beside them); each concept of the algorithm is a file of its own:
//!
//! - `explore`: the loop of Alg. 1 over runs, from the first run to the last leaf;
//! - `walk`: the recursive calls along one run (Alg. 1 lines 3–10), the path's nodes;
//! - `events_at_c`: a run's operations as actions and events of `U` at `C` (`ex(C)`, line 4);
//! - `sleep_sets`: `en(C) \ D` (lines 5 and 7);
//! - `alternatives`: backtracking, the comb's k-partial alternatives (lines 11–12, §5) and the
//!   schedule that follows one;
//! - `prune`, `sibling_marks`: `U := U ∩ Q_{C,D}` (line 13), and what a prune found at a node;
//! - `end_cuts`: the events a kill at the process's end forecloses;
//! - `nondet`: each value of a nondet call as an event, and the verdict's bounds;
//! - `word_checks`: the check behind race-free words;
//! - `runs`, `run_steps`, `snapshots`: running a schedule (from `main` or a paused execution),
//!   and a run as the walk reads it;
//! - `report`, `confirm`, `divergence`, `error`, `options`: the run's bookkeeping, the bugs'
//!   confirmation, divergent runs described, errors, options.
//!
//! The verifier never runs the program but through the executor, and never reports a bug whose
//! schedule does not reproduce it.

mod alternatives;
mod confirm;
mod divergence;
mod end_cuts;
mod error;
mod events_at_c;
mod explore;
mod nondet;
mod options;
mod prune;
mod report;
mod run_steps;
mod runs;
mod sibling_marks;
mod sleep_sets;
mod snapshots;
mod walk;
mod word_checks;

pub use error::VerifyError;
pub use options::{Options, DEFAULT_PRUNE_AT, DEFAULT_SKIP_STEP};
pub use report::{Bug, Hooks, Quiet, Report, Stats};
pub use snapshots::SnapshotPolicy;

use crate::cex;
use crate::comb;
use crate::executor::{Executor, Snapshot};
use crate::fx_hash::FxHashMap;
use crate::memory_limit::MemoryLimit;
use crate::object_table::{ObjIdx, ObjectTable};
use crate::race_free_words::RaceFreeWords;
use crate::word_readers::WordReaders;
use crate::thread_names::{StableThread, ThreadNames};
use crate::unfolding::{ActionIdx, Configuration, EventIdx, Unfolding};
use shared_proto::dependence::ObjectKey;
use shared_proto::{Event, EventKind};
use snapshots::FIRST_SNAPSHOT_COST_US;
use std::time::Instant;
use walk::Node;

/// The exploration of one program under the executor: Alg. 1's `U`, `C` and recursion path,
/// with what the walk keeps beside them.
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
    /// Executions cut at `--max-threads` (`Outcome::ThreadBound`): what lies past their cut is
    /// not explored, so no smaller prefix is told safe once one is found, and the verdict names
    /// the bound.
    thread_bound_cuts: u64,
    /// Some execution waited on a program's condition variable: no spurious wake-up was
    /// explored for it, which the verdict names (see `bounds`).
    cond_waits: bool,
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
    /// Who reads which word, for the words' copies (kept across restarts).
    readers: WordReaders,
    /// Per race-free word (by object index), its last access in the path: by the thread whose
    /// object is the first, before that thread's event at the depth the second gives in its
    /// tree (see `record_accesses`), and whether it writes; undone on backtracking through
    /// `access_undo`.
    accesses: Vec<word_checks::WordLog>,
    access_undo: Vec<word_checks::Undo>,
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

/// " at FILE:LINE:COL (what it accesses)" for a site of the program, for people; empty if
/// unknown.
fn site_text(ex: &Executor, site: Option<shared_proto::SiteId>) -> String {
    let info = site.and_then(|id| ex.hello().sites.iter().find(|(i, _)| *i == id));
    info.map(|(_, info)| format!(" at {} ({})", info.location(), info.target)).unwrap_or_default()
}

impl<'a> Verifier<'a> {
    pub fn new(ex: &'a mut Executor, opts: Options) -> Verifier<'a> {
        let (skip, opts_race_free) = (opts.skip_step, opts.race_free_words);
        let reads_commute = opts.equivalence == shared_proto::equivalence::Equivalence::ReadsCommute;
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
            thread_bound_cuts: 0,
            cond_waits: false,
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
            readers: WordReaders::new(reads_commute),
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
}
