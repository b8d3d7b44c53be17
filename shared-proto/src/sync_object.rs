//! The objects irs builds condition variables, semaphores, barriers, rwlocks and `pthread_once`
//! from (DESIGN §3 "Objects and dependence"): their names and tags, shared by the runtime that
//! builds them and the tools that show them. Names only: nothing here locks or waits.
//!
//! irs models these primitives as small algorithms over the two things its exploration already
//! treats exactly: mutexes (lock, unlock, trylock) and choices (`EventKind::Nondet`). A
//! condition variable is a lock on its waiter list plus one *gate* per waiting thread (a lock
//! the waiter takes, and the signaller releases to wake it); a semaphore, a barrier and an
//! rwlock are a lock on their state plus such a condition variable; `pthread_once` is a lock.
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
/// The condition variable inside an rwlock that writers wait on (for the readers to leave, or
/// the writer); guarded by the rwlock's first reader slot.
pub const RWLOCK_COND: CondSpace = CondSpace { lock: 0x0007, gate_base: 0x0400, what: "rwlock" };

/// An rwlock's reader slots (see [`reader_slot`]): a reader locks only its own slot, a writer
/// all of them, so that read acquisitions by threads of different slots commute.
pub const RWLOCK_SLOTS: u16 = 4;

/// The lock of an rwlock's reader slot `slot` (slot 0's is [`RWLOCK_LOCK`], which also guards
/// the writers' condition variable).
pub fn rwlock_slot_lock(slot: u16) -> u16 {
    if slot == 0 { RWLOCK_LOCK } else { RWLOCK_SLOT_LOCK_BASE + slot }
}

/// The condition variable the readers of slot `slot` wait on (for the writer to leave).
pub fn rwlock_slot_cond(slot: u16) -> CondSpace {
    CondSpace { lock: RWLOCK_SLOT_COND_BASE + slot, gate_base: RWLOCK_SLOT_GATE_BASE + slot * GATES, what: "rwlock" }
}

const RWLOCK_SLOT_LOCK_BASE: u16 = 0x0010;
const RWLOCK_SLOT_COND_BASE: u16 = 0x0020;
const RWLOCK_SLOT_GATE_BASE: u16 = 0x0800;

/// A thread's name as a number, the same in every execution and every mode: `main` is 0, and
/// the `nth` thread (from 0) that a thread named `parent` creates is `child_name(parent, nth)`:
/// a function of the creation path, like the verifier's stable thread names, never of a
/// run-local id (which depends on the order in which unrelated threads create threads). For
/// `main`'s children it is `nth + 1`, so that [`reader_slot`] spreads them out.
pub fn child_name(parent: u64, nth: u32) -> u64 {
    parent.wrapping_mul(0x9e37_79b9_7f4a_7c15).wrapping_add(nth as u64 + 1)
}

/// The rwlock reader slot of the thread named `name` (`child_name`): main's children `0, 1, 2`
/// get slots 1, 2, 3, main and its child 3 slot 0.
pub fn reader_slot(name: u64) -> u16 {
    (name % RWLOCK_SLOTS as u64) as u16
}

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
/// The lock on an rwlock's holders.
pub const RWLOCK_LOCK: u16 = 0x0006;
/// The lock a `pthread_once` runs its function under.
pub const ONCE_LOCK: u16 = 0x0008;

const SPACES: [CondSpace; 2] = [PROGRAM_COND, RWLOCK_COND];

/// Every condition space: the two above and the rwlock reader slots'.
fn spaces() -> impl Iterator<Item = CondSpace> {
    SPACES.into_iter().chain((0..RWLOCK_SLOTS).map(rwlock_slot_cond))
}

/// The reader slot whose lock `tag` is, if it is one.
fn slot_of_lock(tag: u16) -> Option<u16> {
    (0..RWLOCK_SLOTS).find(|&s| rwlock_slot_lock(s) == tag)
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
    if let Some(slot) = slot_of_lock(tag) {
        return Some(format!("the holders of rwlock {base:#x} (reader slot {slot})"));
    }
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
        ONCE_LOCK => format!("pthread_once control {base:#x} (its function runs)"),
        _ => format!("internal object {tag:#x} of {base:#x}"),
    })
}

/// A short label for the internal object `tag` (after its primitive's name in traces:
/// `c.gate[2]`, `s.count`).
pub fn label(tag: u16) -> String {
    if let Some(slot) = slot_of_lock(tag) {
        return format!("holders[{slot}]");
    }
    for sp in spaces() {
        let short = match sp.what {
            "condition variable" => "cond",
            _ => "rwlock",
        };
        if tag == sp.lock {
            return format!("{short}-list");
        }
        if (sp.gate_base..sp.gate_base + GATES).contains(&tag) {
            return format!("{short}-gate[{}]", tag - sp.gate_base);
        }
    }
    match tag {
        SEM_LOCK => "count".into(),
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
        assert!(describe(sub(c, RWLOCK_COND.gate_base)).unwrap().contains("rwlock"));
        assert_eq!(describe(c), None);
    }

    #[test]
    fn main_s_first_children_read_in_slots_of_their_own() {
        let kids: Vec<u16> = (0..3).map(|n| reader_slot(child_name(0, n))).collect();
        assert_eq!(kids, [1, 2, 3]);
        assert_eq!(reader_slot(0), 0);
        assert_ne!(child_name(child_name(0, 0), 1), child_name(child_name(0, 1), 0));
        let locks: Vec<u16> = (0..RWLOCK_SLOTS).map(rwlock_slot_lock).collect();
        assert_eq!(locks[0], RWLOCK_LOCK);
        let gates: Vec<u16> = (0..RWLOCK_SLOTS).map(|s| rwlock_slot_cond(s).gate_base).collect();
        assert!(gates.iter().all(|&g| g > RWLOCK_COND.gate_base + GATES && g + GATES <= TAG_MASK as u16));
        assert_eq!(label(rwlock_slot_lock(2)), "holders[2]");
        assert!(describe(sub(0x1000, rwlock_slot_lock(0))).unwrap().contains("reader slot 0"));
        assert_eq!(label(rwlock_slot_cond(1).gate_base + 5), "rwlock-gate[5]");
    }
}
