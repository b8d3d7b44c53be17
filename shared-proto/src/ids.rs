//! Identifier newtypes (DESIGN §3): logical threads, instrumented sites, programs.

use serde::{Deserialize, Serialize};
use std::fmt;

/// A logical thread id: dense, in order of creation in a run (`main` is `T0`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct ThreadId(pub u32);

impl ThreadId {
    pub const MAIN: ThreadId = ThreadId(0);
    /// A schedule's entry is a thread id whose bits from here up say which value a call of
    /// `__VERIFIER_nondet_*` takes at that step, when the thread's operation is one (an index
    /// into the explored domain; 0, the first, otherwise). Everywhere else a `ThreadId` is a
    /// plain thread id, with these bits clear.
    pub const CHOICE_SHIFT: u32 = 16;

    pub fn index(self) -> usize {
        self.thread().0 as usize
    }

    /// This thread, taking value `choice` at its step (a schedule entry).
    pub fn with_choice(self, choice: u32) -> ThreadId {
        ThreadId(self.thread().0 | choice << Self::CHOICE_SHIFT)
    }

    /// The thread of a schedule entry.
    pub fn thread(self) -> ThreadId {
        ThreadId(self.0 & ((1 << Self::CHOICE_SHIFT) - 1))
    }

    /// The value a schedule entry chooses (0 for a plain thread id).
    pub fn choice(self) -> u32 {
        self.0 >> Self::CHOICE_SHIFT
    }
}

impl fmt::Display for ThreadId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.choice() {
            0 => write!(f, "T{}", self.0),
            c => write!(f, "T{}:{c}", self.thread().0),
        }
    }
}

/// A stable id of an instrumented instruction: the high 32 bits tag the module (from its
/// content hash), the low 32 bits index the module's site table. Stable across builds of the
/// same source with the same flags.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct SiteId(pub u64);

impl SiteId {
    pub fn new(module_tag: u32, index: u32) -> SiteId {
        SiteId(((module_tag as u64) << 32) | index as u64)
    }
    pub fn module_tag(self) -> u32 {
        (self.0 >> 32) as u32
    }
    pub fn index(self) -> u32 {
        self.0 as u32
    }
}

impl fmt::Display for SiteId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:08x}:{}", self.module_tag(), self.index())
    }
}

/// The id of an instrumented program: a hash over the hashes of its instrumented modules, in
/// link order. Traces, prefixes and shared-memory segments are keyed by it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct ProgramId(pub u64);

impl fmt::Display for ProgramId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:016x}", self.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    #[test]
    fn site_id_round_trips_module_tag_and_index() {
        let s = SiteId::new(0xdead_beef, 42);
        assert_eq!(s.module_tag(), 0xdead_beef);
        assert_eq!(s.index(), 42);
        assert_eq!(s.to_string(), "deadbeef:42");
    }
}
