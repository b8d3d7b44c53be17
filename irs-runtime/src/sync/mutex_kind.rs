//! Mutex types (DESIGN §3): what glibc keeps in a `pthread_mutex_t` about its type and owner,
//! read where irs must treat a relock or a foreign unlock as the C library does. A recursive
//! mutex locked again by its owner, or unlocked while locked more than once, and an
//! error-checking one relocked by its owner or unlocked by another thread, change nothing other
//! threads can see: they are no events, in every mode.
//!
//! glibc on x86-64 (`struct __pthread_mutex_s`): `__lock` at offset 0 (0: free), `__count` at offset 4 (recursion depth),
//! `__owner` at 8 (the owner's kernel thread id), `__kind` at 16 (type in the low two bits:
//! 0 normal, 1 recursive, 2 error-checking, 3 adaptive). `tests` check the offsets against the
//! C library's own behaviour.

use shared_proto::sync_object;

pub const NORMAL: i32 = 0;
pub const RECURSIVE: i32 = 1;
pub const ERRORCHECK: i32 = 2;

fn field(m: u64, offset: usize) -> i32 {
    // SAFETY: `m` is the program's `pthread_mutex_t` (40 bytes); a volatile read of an int in it:
    // the C library and the program own the memory, irs only looks.
    unsafe { std::ptr::read_volatile((m as *const u8).add(offset) as *const i32) }
}

/// The type of the program's mutex at `m` (an adaptive one behaves as normal; internal objects
/// and spin locks are normal).
pub fn kind(m: u64) -> i32 {
    if sync_object::decode(m).is_some() {
        return NORMAL;
    }
    match field(m, 16) & 3 {
        3 => NORMAL,
        k => k,
    }
}

/// Does the calling OS thread hold the mutex (glibc records owners of recursive and
/// error-checking mutexes)? Only the owner itself can see its own id there, so the answer is
/// stable for the caller.
pub fn held_by_me(m: u64) -> bool {
    // SAFETY: gettid has no preconditions.
    field(m, 8) == unsafe { libc::gettid() }
}

/// Is the program's mutex at `m` locked (glibc's lock word, offset 0, is not zero)?
pub fn locked(m: u64) -> bool {
    field(m, 0) != 0
}

/// How many times its owner has locked a recursive mutex.
pub fn depth(m: u64) -> u32 {
    field(m, 4) as u32
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_offsets_are_glibcs() {
        // SAFETY: plain pthread calls on a mutex of our own.
        unsafe {
            let mut attr: libc::pthread_mutexattr_t = std::mem::zeroed();
            libc::pthread_mutexattr_init(&mut attr);
            libc::pthread_mutexattr_settype(&mut attr, libc::PTHREAD_MUTEX_RECURSIVE);
            let mut m: libc::pthread_mutex_t = std::mem::zeroed();
            libc::pthread_mutex_init(&mut m, &attr);
            let a = &mut m as *mut _ as u64;
            assert_eq!(kind(a), RECURSIVE);
            assert!(!held_by_me(a));
            libc::pthread_mutex_lock(&mut m);
            libc::pthread_mutex_lock(&mut m);
            assert!(held_by_me(a) && depth(a) == 2 && locked(a));
            libc::pthread_mutex_unlock(&mut m);
            libc::pthread_mutex_unlock(&mut m);
            assert!(!locked(a));
            libc::pthread_mutexattr_settype(&mut attr, libc::PTHREAD_MUTEX_ERRORCHECK);
            let mut e: libc::pthread_mutex_t = std::mem::zeroed();
            libc::pthread_mutex_init(&mut e, &attr);
            assert_eq!(kind(&mut e as *mut _ as u64), ERRORCHECK);
            let n: libc::pthread_mutex_t = libc::PTHREAD_MUTEX_INITIALIZER;
            assert_eq!(kind(&n as *const _ as u64), NORMAL);
        }
    }
}
