//! The exploration's options: which alternatives (k-partial, 000 §5, or optimal), the limits,
//! the snapshot policy, when to prune `U` (Alg. 1 line 13) and whether words start race-free.
//! Options only: nothing here changes what an option means once the exploration has started.

use super::SnapshotPolicy;
use shared_proto::equivalence::Equivalence;
use shared_proto::ThreadId;
use std::time::Duration;

/// The skip-pointer step of the object trees (see `unfolding`).
pub const DEFAULT_SKIP_STEP: u32 = 4;
/// `U` is pruned from this many events on.
pub const DEFAULT_PRUNE_AT: usize = 2048;

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
    /// Which accesses to a word are dependent (reads commute by default).
    pub equivalence: Equivalence,
    /// Stop once the verifier's resident set reaches this many bytes (see `memory_limit`;
    /// checked between executions).
    pub memory_limit: Option<u64>,
}

impl Default for Options {
    fn default() -> Self {
        Options { k: None, max_executions: None, time_limit: None, skip_step: DEFAULT_SKIP_STEP, snapshots: SnapshotPolicy::Auto, first_schedule: None, prune_at: DEFAULT_PRUNE_AT, race_free_words: true, first_bug: false, memory_limit: None, equivalence: Equivalence::default() }
    }
}
