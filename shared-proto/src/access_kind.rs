//! The kinds of memory access the pass instruments (DESIGN §3, §5): one vocabulary for sites
//! (what an instruction does) and events (what one execution of it did).

use serde::{Deserialize, Serialize};

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum AccessKind {
    Load,
    Store,
    AtomicLoad,
    AtomicStore,
    /// atomicrmw: `atomic_fetch_add`, `__sync_fetch_and_add`, `atomic_exchange`, ...
    Rmw,
    /// cmpxchg: `atomic_compare_exchange_*`, `__sync_bool_compare_and_swap`, ...
    CmpXchg,
    /// `free` (or a `realloc` of the block): a write of every word of the block, so that it
    /// is dependent with every access to the block and with every operation on a mutex in it
    /// (which reads the mutex's first word, `dependence::objects_of`). The runtime makes it,
    /// never the pass.
    Free,
    /// An rmw or cmpxchg that left memory as it was (a compare-exchange that failed, an
    /// exchange of the value already there): a read (`crate::value_model`). The pass never
    /// emits it; the model labels updates so.
    UnchangedUpdate,
}

impl AccessKind {
    pub const ALL: [AccessKind; 8] = [
        AccessKind::Load,
        AccessKind::Store,
        AccessKind::AtomicLoad,
        AccessKind::AtomicStore,
        AccessKind::Rmw,
        AccessKind::CmpXchg,
        AccessKind::Free,
        AccessKind::UnchangedUpdate,
    ];

    pub fn name(self) -> &'static str {
        match self {
            AccessKind::Load => "load",
            AccessKind::Store => "store",
            AccessKind::AtomicLoad => "atomic-load",
            AccessKind::AtomicStore => "atomic-store",
            AccessKind::Rmw => "rmw",
            AccessKind::CmpXchg => "cmpxchg",
            AccessKind::Free => "free",
            AccessKind::UnchangedUpdate => "update-unchanged",
        }
    }

    /// Does it (possibly) write? Two accesses to one location conflict unless both only read.
    pub fn writes(self) -> bool {
        !matches!(self, AccessKind::Load | AccessKind::AtomicLoad | AccessKind::UnchangedUpdate)
    }

    /// The code the pass passes to the runtime (see [`crate::abi`]).
    pub fn code(self) -> u8 {
        Self::ALL.iter().position(|k| *k == self).expect("ALL lists every kind") as u8
    }

    pub fn from_code(code: u8) -> Option<AccessKind> {
        Self::ALL.get(code as usize).copied()
    }
}
