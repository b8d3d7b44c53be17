//! The C library's own rwlock in a run relaxed from its start (`enforce::relaxed`: ENFORCE with
//! no constraint, no chaos, no trace recorded): such a run waits for nothing and records
//! nothing, so all that irs's rwlock would add is its cost (3x the plain build on a
//! read-heavy program). glibc's is used instead, for every rwlock of its default kind: the
//! entry points forward an acquisition or release unchanged (`sync::rwlock`'s `forwarded!`).
//!
//! Why every behaviour it allows was explored (DESIGN §4: a relaxed run must be one of the
//! explored executions): glibc's default rwlock (`PTHREAD_RWLOCK_PREFER_READER_NP`, and
//! `PREFER_WRITER_NP`, which glibc treats alike) changes its holders by single atomic
//! operations on its readers word, so every run is a sequence of acquisitions and releases,
//! each at one instant; a read acquisition succeeds exactly when no writer holds the lock, a
//! write acquisition exactly when nobody does: the model the exploration explores
//! (`explore::scheduler::rwlocks`: readers preferred, the most permissive order). The writer
//! asking again for either lock gets `EDEADLK` from glibc as from the model; a try fails
//! (`EBUSY`) only where the lock is held; a timed acquisition fails only after the lock was
//! held throughout its wait (the exploration lets it fail wherever the lock is held). An unlock
//! by a thread that holds nothing (undefined in POSIX; glibc takes it for a reader's release and
//! corrupts the lock) is a violation the exploration reports, so a run relaxed after a `safe`
//! verdict never makes one.
//!
//! Not used for a writer-preferring rwlock (`PTHREAD_RWLOCK_PREFER_WRITER_NONRECURSIVE_NP`,
//! kind 2 in glibc's `__flags`, offset 48 on x86-64): a waiting writer keeps new readers out
//! there, so a reader asking again behind a waiting writer deadlocks in glibc, an order the
//! readers-preferred model never explores; irs's own rwlock (readers preferred) runs it. (The
//! exploration refuses such a lock as unsupported: its verdicts would not cover the plain
//! build's deadlocks.)

use crate::enforce::relaxed::relaxed;

/// glibc's kind of a writer-preferring, non-recursive rwlock (`__flags`).
const WRITER_NONRECURSIVE: u32 = 2;

/// Offset of `__flags` in glibc's `pthread_rwlock_t` on x86-64.
const FLAGS_OFFSET: usize = 48;

/// Is `r` a writer-preferring, non-recursive rwlock (glibc's kind 2)?
pub fn writer_preferring(r: *mut libc::pthread_rwlock_t) -> bool {
    // SAFETY: `r` is the program's `pthread_rwlock_t` (56 bytes); a volatile read of an int in
    // it: the C library and the program own the memory, irs only looks (the kind is set at
    // initialisation, before any other thread may use the lock).
    unsafe { std::ptr::read_volatile((r as *const u8).add(FLAGS_OFFSET) as *const u32) == WRITER_NONRECURSIVE }
}

/// Does the C library's rwlock run `r` in this run?
pub fn applies(r: *mut libc::pthread_rwlock_t) -> bool {
    relaxed() && !writer_preferring(r)
}
