//! Events: one execution of a visible operation by a thread (DESIGN §3), identified in a run by
//! `(tid, k)`: `k` counts the visible events of `tid` before this one.

use crate::access_kind::AccessKind;
use crate::ids::{SiteId, ThreadId};
use serde::{Deserialize, Serialize};

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum EventKind {
    Access(AccessKind),
    Lock,
    Unlock,
    TryLock,
    TryLockFail,
    Create,
    Join,
    Exit,
}

impl EventKind {
    pub fn name(self) -> &'static str {
        match self {
            EventKind::Access(a) => a.name(),
            EventKind::Lock => "lock",
            EventKind::Unlock => "unlock",
            EventKind::TryLock => "trylock",
            EventKind::TryLockFail => "trylock-fail",
            EventKind::Create => "create",
            EventKind::Join => "join",
            EventKind::Exit => "exit",
        }
    }

}

/// What an event acts on.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum ObjectRef {
    /// Memory at a raw address, `size` bytes (0 when the size is not known statically).
    Memory { addr: u64, size: u32 },
    /// A mutex, by the raw address of its `pthread_mutex_t`.
    Mutex { addr: u64 },
    /// A logical thread (create, join, exit).
    Thread(ThreadId),
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Event {
    pub tid: ThreadId,
    pub k: u32,
    /// The instrumented instruction; `None` for events the runtime makes itself (the exit of a
    /// thread whose start routine returned, `main`'s return).
    pub site: Option<SiteId>,
    pub kind: EventKind,
    pub object: ObjectRef,
}
