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

    pub fn count(&self) -> usize {
        self.by_path.len()
    }
}

/// One execution's thread ids, as stable names.
#[derive(Clone, Debug, Default)]
pub struct RunThreads {
    stable: Vec<StableThread>,
}

impl RunThreads {
    pub fn new(names: &mut ThreadNames, threads: &[ThreadInfo]) -> RunThreads {
        let mut stable: Vec<Option<StableThread>> = vec![None; threads.len()];
        // The table lists a thread after its creator (creation order), but do not rely on it.
        for _ in 0..threads.len() {
            for info in threads {
                let i = info.id.index();
                if i >= stable.len() || stable[i].is_some() {
                    continue;
                }
                let parent = match info.parent {
                    None => None,
                    Some(p) => match stable.get(p.index()).copied().flatten() {
                        Some(s) => Some(s),
                        None => continue,
                    },
                };
                stable[i] = Some(names.intern(parent, info.nth_child));
            }
        }
        RunThreads { stable: stable.into_iter().map(|s| s.unwrap_or(StableThread(u32::MAX))).collect() }
    }

    pub fn stable(&self, t: ThreadId) -> StableThread {
        self.stable.get(t.index()).copied().unwrap_or(StableThread(u32::MAX))
    }
}
