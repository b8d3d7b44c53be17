//! Parking on a 32-bit counter with the Linux futex (DESIGN §6): a waiter sleeps in the kernel
//! only while the counter still holds the value it saw; a waker pays for the system call only
//! when someone is parked.

use std::sync::atomic::AtomicU32;
use std::time::Duration;

/// Sleep while `*word == seen`, at most `timeout`. Spurious wake-ups are fine: callers re-check.
pub fn wait(word: &AtomicU32, seen: u32, timeout: Duration) {
    let ts = libc::timespec { tv_sec: timeout.as_secs() as libc::time_t, tv_nsec: timeout.subsec_nanos() as libc::c_long };
    // SAFETY: FUTEX_WAIT on a live, aligned 32-bit atomic; the kernel only reads it.
    unsafe {
        libc::syscall(libc::SYS_futex, word.as_ptr(), libc::FUTEX_WAIT | libc::FUTEX_PRIVATE_FLAG, seen, &ts as *const libc::timespec);
    }
}

/// Wake every thread parked on `word`.
pub fn wake_all(word: &AtomicU32) {
    // SAFETY: FUTEX_WAKE on a live, aligned 32-bit atomic.
    unsafe {
        libc::syscall(libc::SYS_futex, word.as_ptr(), libc::FUTEX_WAKE | libc::FUTEX_PRIVATE_FLAG, i32::MAX);
    }
}
