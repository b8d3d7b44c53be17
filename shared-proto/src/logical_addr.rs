//! Logical addresses (DESIGN §3): memory named so that the name does not depend on what
//! unrelated threads did. Which heap block or stack a thread gets depends on the interleaving,
//! but "the 2nd block T1 allocated, offset 8" does not. Exploration needs that: what an event
//! does must be a function of its causal history.

use crate::ids::ThreadId;
use serde::{Deserialize, Serialize};
use std::fmt;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub enum Region {
    /// A global, or memory irs does not know about: named by its address, which is the same in
    /// every execution forked from one server.
    Static,
    /// The `alloc`-th block (from 0) that `thread` allocated.
    Heap { thread: ThreadId, alloc: u32 },
    /// `thread`'s stack; the offset counts down from its top.
    Stack { thread: ThreadId },
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub struct LogicalAddr {
    pub region: Region,
    /// Static: the address; Heap: bytes from the block's start; Stack: bytes below the top.
    pub offset: u64,
}

impl LogicalAddr {
    /// Encoding for fixed-size records: (tag, thread, alloc, offset).
    pub fn to_raw(self) -> (u32, u32, u32, u64) {
        match self.region {
            Region::Static => (1, 0, 0, self.offset),
            Region::Heap { thread, alloc } => (2, thread.0, alloc, self.offset),
            Region::Stack { thread } => (3, thread.0, 0, self.offset),
        }
    }

    /// `None` for tag 0 (no logical address); `Err` for a tag no writer emits.
    pub fn from_raw(tag: u32, thread: u32, alloc: u32, offset: u64) -> Result<Option<LogicalAddr>, u32> {
        let region = match tag {
            0 => return Ok(None),
            1 => Region::Static,
            2 => Region::Heap { thread: ThreadId(thread), alloc },
            3 => Region::Stack { thread: ThreadId(thread) },
            t => return Err(t),
        };
        Ok(Some(LogicalAddr { region, offset }))
    }
}

impl fmt::Display for LogicalAddr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.region {
            Region::Static => write!(f, "{:#x}", self.offset),
            Region::Heap { thread, alloc } if self.offset == 0 => write!(f, "heap[{thread}#{alloc}]"),
            Region::Heap { thread, alloc } => write!(f, "heap[{thread}#{alloc}]+{}", self.offset),
            Region::Stack { thread } => write!(f, "stack[{thread}]-{}", self.offset),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    #[test]
    fn raw_round_trip_and_display() {
        for l in [
            LogicalAddr { region: Region::Static, offset: 0x1234 },
            LogicalAddr { region: Region::Heap { thread: ThreadId(2), alloc: 5 }, offset: 8 },
            LogicalAddr { region: Region::Stack { thread: ThreadId(1) }, offset: 40 },
        ] {
            let (t, th, a, o) = l.to_raw();
            assert_eq!(LogicalAddr::from_raw(t, th, a, o), Ok(Some(l)));
        }
        assert_eq!(LogicalAddr::from_raw(0, 0, 0, 0), Ok(None));
        assert_eq!(LogicalAddr::from_raw(9, 0, 0, 0), Err(9));
        assert_eq!(LogicalAddr { region: Region::Heap { thread: ThreadId(1), alloc: 0 }, offset: 8 }.to_string(), "heap[T1#0]+8");
        assert_eq!(LogicalAddr { region: Region::Stack { thread: ThreadId(0) }, offset: 12 }.to_string(), "stack[T0]-12");
    }
}
