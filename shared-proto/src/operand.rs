//! What a store stores and what an update compares and writes, as events carry it (the data of
//! the value model, `crate::value_model`, which says what it means).

use crate::logical_addr::{LogicalAddr, Region};
use serde::{Deserialize, Serialize};

/// A value as the model compares it: a pointer into a heap block or a thread's stack by its
/// logical address (the same in every execution), any other bits raw (`Region::Static`).
pub type Value = LogicalAddr;

/// The raw value `v` (bits that are no pointer the runtime names).
pub fn raw(v: u64) -> Value {
    LogicalAddr { region: Region::Static, offset: v }
}

/// The low `size` bytes of `v` (all of it from 8 bytes on): a value of that size.
pub fn of_size(v: u64, size: u32) -> u64 {
    if size >= 8 { v } else { v & ((1u64 << (8 * size)) - 1) }
}

/// What an operation writes, as the instruction says it (known before it runs).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum Operand {
    /// A store of this value.
    Store(Value),
    /// A compare-exchange: `desired` if the value found is `expected`.
    Cas { expected: Value, desired: Value },
    /// An exchange (`atomic_exchange`, `__sync_lock_test_and_set`).
    Xchg(Value),
    /// `atomic_fetch_add` of this many (raw values only).
    Add(u64),
    /// `atomic_fetch_sub` of this many (raw values only).
    Sub(u64),
}

/// An operation's operand, and for an update the runtime performed, whether it changed memory.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Valued {
    pub operand: Operand,
    /// The update changed the bytes it accessed (meaningless for a store, or before it ran).
    pub changed: bool,
}

