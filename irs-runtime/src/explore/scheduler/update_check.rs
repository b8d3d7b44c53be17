//! Whether an update changed memory (the value model's check, `shared_proto::value_model`): what
//! a granted update finds at its address is read before it runs (`memory::access_before`), and
//! compared with what is there once it is done (`decision::done`), so that the runtime reports
//! it with the update's event; the verifier stops if its model called a changing update a read.
//! The spin watch takes an update that left memory as it was as the read it is (a thread that
//! spins on a failing compare-exchange or a test-and-set of a set flag waits, as on a load).

use shared_proto::explore_buffer::OpRecord;
use shared_proto::value_model::Operand;

/// The `size` bytes (at most 8) at `addr`, zero-extended: what an update finds, or leaves.
///
/// # Safety
/// `addr` is the address of the access the calling thread performs right now (granted): the
/// instruction itself reads these bytes next, or has just done so.
pub(super) unsafe fn bytes_at(addr: u64, size: u32) -> u64 {
    let mut b = [0u8; 8];
    // SAFETY: per the contract, `size` readable bytes at `addr` (a volatile read each: the
    // program's own access may be atomic, and no other thread runs meanwhile in EXPLORE).
    for (i, x) in b.iter_mut().enumerate().take(size.min(8) as usize) {
        *x = unsafe { std::ptr::read_volatile((addr as *const u8).add(i)) };
    }
    u64::from_le_bytes(b)
}

/// Whether the update `op` (done) changed memory, which it found as `found`: recorded with it
/// (see `memory::access_before`).
pub(super) fn note_changed(op: &mut OpRecord, found: u64) {
    if let Some(v) = op.value.as_mut().filter(|v| !matches!(v.operand, Operand::Store(_))) {
        // SAFETY: the access the thread has just performed, at its own address and size.
        v.changed = unsafe { bytes_at(op.addr, op.size) } != found;
    }
}

/// Whether `op` (done) is an update that left memory as it was.
pub(super) fn unchanged(op: &OpRecord) -> bool {
    op.value.is_some_and(|v| !v.changed && !matches!(v.operand, Operand::Store(_)))
}
