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
use std::cell::Cell;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::Once;

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

/// Forks seen in this process's line (a child's threads have other kernel ids than the cached
/// ones of the thread that forked it).
static FORKS: AtomicU32 = AtomicU32::new(0);
static AT_FORK: Once = Once::new();

thread_local! {
    /// The calling thread's kernel id, and the fork count it was read at.
    static TID: Cell<(u32, i32)> = const { Cell::new((u32::MAX, 0)) };
}

extern "C" fn forked_child() {
    // Relaxed: the child has one thread, which runs this before anything reads it.
    FORKS.fetch_add(1, Ordering::Relaxed);
}

/// The calling thread's kernel id, as glibc stores it in a mutex's owner field: a `gettid`
/// syscall (175 ns here) once per thread, not at every operation on a recursive or
/// error-checking mutex. A `fork` through the C library makes the child read it again (a
/// `SYS_fork` made by hand, bypassing the fork handlers, would not).
fn my_tid() -> i32 {
    AT_FORK.call_once(|| {
        // SAFETY: registers a handler that only bumps an atomic counter.
        unsafe { libc::pthread_atfork(None, None, Some(forked_child)) };
    });
    // Relaxed: the counter changes only in a child's single thread, before it runs on.
    let forks = FORKS.load(Ordering::Relaxed);
    TID.try_with(|c| match c.get() {
        (f, tid) if f == forks => tid,
        _ => {
            // SAFETY: gettid has no preconditions.
            let tid = unsafe { libc::gettid() };
            c.set((forks, tid));
            tid
        }
    })
    // SAFETY: as above (a thread-local's destructor running: no cache).
    .unwrap_or_else(|_| unsafe { libc::gettid() })
}

/// Does the calling OS thread hold the mutex (glibc records owners of recursive and
/// error-checking mutexes)? Only the owner itself can see its own id there, so the answer is
/// stable for the caller.
pub fn held_by_me(m: u64) -> bool {
    field(m, 8) == my_tid()
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

    /// A mutex of type `kind` (glibc's constant), initialised in place on the heap.
    fn mutex_of(kind: std::ffi::c_int) -> Box<libc::pthread_mutex_t> {
        // SAFETY: plain pthread calls on an attribute and a mutex of our own.
        unsafe {
            let mut attr: libc::pthread_mutexattr_t = std::mem::zeroed();
            libc::pthread_mutexattr_init(&mut attr);
            libc::pthread_mutexattr_settype(&mut attr, kind);
            let mut m: Box<libc::pthread_mutex_t> = Box::new(std::mem::zeroed());
            libc::pthread_mutex_init(&mut *m, &attr);
            m
        }
    }

    #[test]
    fn the_offsets_are_glibcs() {
        let mut m = mutex_of(libc::PTHREAD_MUTEX_RECURSIVE);
        let mut e = mutex_of(libc::PTHREAD_MUTEX_ERRORCHECK);
        // SAFETY: plain pthread calls on mutexes of our own.
        unsafe {
            let m = &mut *m;
            let a = m as *mut _ as u64;
            assert_eq!(kind(a), RECURSIVE);
            assert!(!held_by_me(a));
            libc::pthread_mutex_lock(m);
            libc::pthread_mutex_lock(m);
            assert!(held_by_me(a) && depth(a) == 2 && locked(a));
            libc::pthread_mutex_unlock(m);
            libc::pthread_mutex_unlock(m);
            assert!(!locked(a));
            assert_eq!(kind(&mut *e as *mut _ as u64), ERRORCHECK);
            let n: libc::pthread_mutex_t = libc::PTHREAD_MUTEX_INITIALIZER;
            assert_eq!(kind(&n as *const _ as u64), NORMAL);
        }
    }

    #[test]
    fn the_cached_thread_id_is_read_again_after_a_fork() {
        let mut m = mutex_of(libc::PTHREAD_MUTEX_RECURSIVE);
        // SAFETY: plain pthread calls on a mutex of our own; the child only locks, compares
        // and exits.
        unsafe {
            let m = &mut *m;
            let a = m as *mut _ as u64;
            assert!(!held_by_me(a), "caches the parent's id");
            let pid = libc::fork();
            if pid == 0 {
                libc::pthread_mutex_lock(m);
                libc::_exit(if held_by_me(a) { 0 } else { 1 });
            }
            let mut status = 0;
            libc::waitpid(pid, &mut status, 0);
            assert!(libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0, "the child saw its own lock as another thread's");
            let other = std::thread::spawn(move || {
                libc::pthread_mutex_lock(a as *mut libc::pthread_mutex_t);
                held_by_me(a)
            });
            assert!(other.join().unwrap(), "another thread, its own id");
            assert!(!held_by_me(a), "held by the other thread");
        }
    }
}
