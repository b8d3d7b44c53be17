//! Stable names of threads across executions (DESIGN §3). The executor numbers logical threads
//! in order of creation, which depends on the schedule once several threads create threads; the
//! unfolding needs names that depend only on causal history: "the `n`-th thread that thread `P`
//! created". [`ThreadNames`] interns those paths as [`StableThread`]s; [`RunThreads`] maps one
//! execution's ids to them and back.

use shared_proto::{ThreadId, ThreadInfo};
use crate::fx_hash::FxHashMap;

/// A thread named by its creation path (`main` is `StableThread(0)`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct StableThread(pub u32);

#[derive(Default)]
pub struct ThreadNames {
    by_path: FxHashMap<(Option<StableThread>, u32), StableThread>,
}

impl ThreadNames {
    pub fn intern(&mut self, parent: Option<StableThread>, nth_child: u32) -> StableThread {
        let next = StableThread(self.by_path.len() as u32);
        *self.by_path.entry((parent, nth_child)).or_insert(next)
    }
}

/// One execution's thread ids, as stable names.
#[derive(Clone, Debug, Default)]
pub struct RunThreads {
    stable: Vec<StableThread>,
}

impl RunThreads {
    /// Name the threads of `threads` (the run's table so far, in creation order: a parent
    /// before its children, as the buffer guarantees) not named yet.
    pub fn update(&mut self, names: &mut ThreadNames, threads: &[ThreadInfo]) {
        self.stable.reserve(threads.len().saturating_sub(self.stable.len()));
        for info in threads.iter().skip(self.stable.len()) {
            let parent = info.parent.map(|p| self.stable(p));
            self.stable.push(names.intern(parent, info.nth_child));
        }
    }

    pub fn stable(&self, t: ThreadId) -> StableThread {
        self.stable.get(t.index()).copied().unwrap_or(StableThread(u32::MAX))
    }
}
