//! The objects irs builds condition variables, semaphores, barriers, rwlocks and `pthread_once`
//! from (DESIGN §3 "Objects and dependence"): their names and tags, shared by the runtime that
//! builds them and the tools that show them. Names only: nothing here locks or waits.
//!
//! irs models these primitives as small algorithms over the two things its exploration already
//! treats exactly: mutexes (lock, unlock, trylock) and choices (`EventKind::Nondet`). A
//! condition variable is a lock on its waiter list plus one *gate* per waiting thread (a lock
//! the waiter takes, and the signaller releases to wake it); `pthread_once` is a lock.
//! Semaphores, barriers and rwlocks are events of their own (`EventKind::Sem*`, `Barrier*`,
//! `Rw*`): here only the names a serialised run gives their blocking states.
//! The runtime runs the same algorithm in every mode (EXPLORE, RECORD, ENFORCE), so the events
//! a verified trace holds are the ones a production run performs.
//!
//! These internal locks are named after the primitive's own address: the address with bit 63
//! set and a *tag* in bits 48..63 (user addresses and logical offsets stay below 2^48), so that
//! they never coincide with a program's mutex or memory word, and are as logical as the
//! primitive's address (a condition variable in a heap block is named by the block).

/// Set on every internal object's address.
pub const SUB_BIT: u64 = 1 << 63;
const TAG_SHIFT: u32 = 48;
const TAG_MASK: u64 = 0x7fff;

/// Which primitive an internal condition variable belongs to: its lock's tag and the first of
/// its gates' tags (one gate per thread, `gate_base + thread`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CondSpace {
    pub lock: u16,
    pub gate_base: u16,
    pub what: &'static str,
}

/// A program's own `pthread_cond_t`.
pub const PROGRAM_COND: CondSpace = CondSpace { lock: 0x0001, gate_base: 0x0100, what: "condition variable" };
/// A semaphore's count, as a serialised run names it: "held" while the count is 0 (a
/// semaphore's operations are events of their own, `EventKind::Sem*`, on no internal object).
pub const SEM_LOCK: u16 = 0x0002;
/// A barrier's generation `g`, as a serialised run names it: "held" until every thread of it
/// has arrived (a barrier's operations are events of their own, `EventKind::Barrier*`, on no
/// internal object). Generations 256 apart share a name (their waiters are long gone).
pub fn barrier_generation(g: u32) -> u16 {
    BARRIER_GENERATIONS + (g & 0xff) as u16
}

/// A barrier's generation `g`, "held" from its last arrival until its release: a thread that
/// arrives meanwhile belongs to the next generation and waits for the release first.
pub fn barrier_full(g: u32) -> u16 {
    BARRIER_FULL + (g & 0xff) as u16
}

const BARRIER_GENERATIONS: u16 = 0x0c00;
const BARRIER_FULL: u16 = 0x0d00;
/// An rwlock, as a serialised run names it for writers: "held" while anyone holds it (an
/// rwlock's operations are events of their own, `EventKind::Rw*`, on no internal object).
pub const RWLOCK_LOCK: u16 = 0x0006;
/// An rwlock, as a serialised run names it for readers: "held" while a writer holds it.
pub const RWLOCK_READ_BLOCK: u16 = 0x0009;
/// The lock a `pthread_once` runs its function under.
pub const ONCE_LOCK: u16 = 0x0008;

/// Every condition space (one: a program's condition variables).
fn spaces() -> impl Iterator<Item = CondSpace> {
    [PROGRAM_COND].into_iter()
}
/// Gates per condition variable: one per thread (EXPLORE has at most 64).
const GATES: u16 = 0x100;

/// The internal object `tag` of the primitive at `base` (an address or a logical offset).
pub fn sub(base: u64, tag: u16) -> u64 {
    debug_assert!(base & (SUB_BIT | (TAG_MASK << TAG_SHIFT)) == 0, "an address above 2^48");
    base | SUB_BIT | ((tag as u64 & TAG_MASK) << TAG_SHIFT)
}

/// The primitive's address and the tag, when `addr` names an internal object.
pub fn decode(addr: u64) -> Option<(u64, u16)> {
    (addr & SUB_BIT != 0).then(|| (addr & ((1 << TAG_SHIFT) - 1), ((addr >> TAG_SHIFT) & TAG_MASK) as u16))
}

/// What waiting on the internal lock at `addr` means, for people ("condition variable 0x… (a
/// signal)"); `None` for a program's own mutex.
pub fn describe(addr: u64) -> Option<String> {
    let (base, tag) = decode(addr)?;
    for s in spaces() {
        if tag == s.lock {
            return Some(format!("the internal lock of {} {base:#x}", s.what));
        }
        if (s.gate_base..s.gate_base + GATES).contains(&tag) {
            let why = match s.what {
                "condition variable" => "a signal or broadcast",
                _ => "an unlock",
            };
            return Some(format!("{} {base:#x} (waiting for {why})", s.what));
        }
    }
    Some(match tag {
        SEM_LOCK => format!("the count of semaphore {base:#x}"),
        RWLOCK_LOCK => format!("rwlock {base:#x} (held)"),
        RWLOCK_READ_BLOCK => format!("rwlock {base:#x} (held for writing)"),
        ONCE_LOCK => format!("pthread_once control {base:#x} (its function runs)"),
        _ => format!("internal object {tag:#x} of {base:#x}"),
    })
}

/// Whether `addr` names a gate of a program's condition variable: an event on one belongs to a
/// wait on that condition variable (the waiter's) or to the signal that ends it.
pub fn is_condition_gate(addr: u64) -> bool {
    decode(addr).is_some_and(|(_, tag)| (PROGRAM_COND.gate_base..PROGRAM_COND.gate_base + GATES).contains(&tag))
}

/// A short label for the internal object `tag` (after its primitive's name in traces:
/// `c.gate[2]`, `s.count`).
pub fn label(tag: u16) -> String {
    for sp in spaces() {
        let short = "cond";
        if tag == sp.lock {
            return format!("{short}-list");
        }
        if (sp.gate_base..sp.gate_base + GATES).contains(&tag) {
            return format!("{short}-gate[{}]", tag - sp.gate_base);
        }
    }
    match tag {
        SEM_LOCK => "count".into(),
        RWLOCK_LOCK => "held".into(),
        RWLOCK_READ_BLOCK => "write-held".into(),
        ONCE_LOCK => "once".into(),
        t => format!("internal-{t:#x}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn internal_objects_are_named_apart_and_described() {
        let c = 0x7fff_1234_5678u64;
        let lock = sub(c, PROGRAM_COND.lock);
        let gate = sub(c, PROGRAM_COND.gate_base + 3);
        assert!(lock != gate && lock != c && gate & SUB_BIT != 0);
        assert_eq!(decode(gate), Some((c, PROGRAM_COND.gate_base + 3)));
        assert_eq!(decode(c), None);
        assert!(describe(gate).unwrap().starts_with("condition variable 0x7fff12345678 (waiting for a signal"));
        assert!(describe(sub(c, RWLOCK_LOCK)).unwrap().contains("rwlock"));
        assert_eq!(describe(c), None);
    }

}
