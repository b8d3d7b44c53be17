//! Clocks (`time`, `clock_gettime`, `gettimeofday`, `clock`), which the pass routes here
//! (DESIGN §7: an explored execution depends on nothing irs does not control). In EXPLORE they
//! read *virtual time*, so that the same schedule gives the same execution whatever the machine's
//! load: a thread's virtual time starts at its creator's (at `main`, the date to the second when
//! the fork server started, and a fixed monotonic time, the same for every execution), moves on by the length of each of its sleeps
//! (which cost no real time, `sleeps`) and by 1 ms at each clock read, and a join brings the
//! joiner up to the joined thread's. A loop that polls the clock until a second has passed
//! (C-Thread-Pool's `thpool_destroy`) ends after a thousand reads, in every execution alike;
//! before, it ended where the real second did, and two runs of one schedule differed.
//!
//! The time a thread reads is a function of its own events (its reads, sleeps, creation and
//! joins), never of the interleaving, so equivalent schedules read the same times. CPU-time
//! clocks read the same virtual time from 0. In every other mode the calls are the C library's.
//! Never: read the real clock inside an explored execution.

use crate::explore::scheduler;
use crate::mode;
use std::ffi::{c_int, c_void};
use std::sync::atomic::{AtomicU64, Ordering};

/// How far one clock read moves the reading thread's virtual time on.
const READ_NS: u64 = 1_000_000;

/// The fork server's `CLOCK_REALTIME` and `CLOCK_MONOTONIC` when it started, in ns. Relaxed:
/// set once by `prepare`, before the first execution is forked.
static REALTIME_BASE: AtomicU64 = AtomicU64::new(0);
static MONOTONIC_BASE: AtomicU64 = AtomicU64::new(0);

fn real_ns(clock: libc::clockid_t) -> u64 {
    let mut t = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: clock_gettime fills `t`.
    unsafe { libc::clock_gettime(clock, &mut t) };
    t.tv_sec as u64 * 1_000_000_000 + t.tv_nsec as u64
}

/// Take the bases (in the fork server, before any execution): the date, to the second (so that
/// a schedule replayed by another verification or by `irs replay` reads the same times but for
/// the whole seconds of the date), and a fixed monotonic start (as if the machine had been up
/// for `MONOTONIC_START_S`).
pub fn prepare() {
    let second = 1_000_000_000;
    REALTIME_BASE.store(real_ns(libc::CLOCK_REALTIME) / second * second, Ordering::Relaxed);
    MONOTONIC_BASE.store(MONOTONIC_START_S * second, Ordering::Relaxed);
}

/// Where `CLOCK_MONOTONIC` starts in every execution, in seconds.
const MONOTONIC_START_S: u64 = 1000;

/// Where the virtual time of `clock` starts; `None` for a clock irs does not know (read for
/// real).
fn base(clock: libc::clockid_t) -> Option<u64> {
    match clock {
        libc::CLOCK_REALTIME | libc::CLOCK_REALTIME_COARSE | libc::CLOCK_TAI => Some(REALTIME_BASE.load(Ordering::Relaxed)),
        libc::CLOCK_MONOTONIC | libc::CLOCK_MONOTONIC_RAW | libc::CLOCK_MONOTONIC_COARSE | libc::CLOCK_BOOTTIME => Some(MONOTONIC_BASE.load(Ordering::Relaxed)),
        libc::CLOCK_PROCESS_CPUTIME_ID | libc::CLOCK_THREAD_CPUTIME_ID => Some(0),
        _ => None,
    }
}

/// In EXPLORE, the calling thread's reading of `clock` in ns (its virtual time moves on).
fn virtual_ns(clock: libc::clockid_t) -> Option<u64> {
    if !mode::explore() {
        return None;
    }
    let b = base(clock)?;
    Some(b.saturating_add(scheduler::clock_read(READ_NS)))
}

/// In EXPLORE, an absolute sleep until `deadline` (ns) of `clock`: the thread's virtual time
/// reaches it.
pub fn sleep_until(clock: libc::clockid_t, deadline: u64) {
    if let Some(b) = base(clock) {
        scheduler::clock_reach(deadline.saturating_sub(b));
    }
}

fn timespec_of(ns: u64) -> libc::timespec {
    libc::timespec { tv_sec: (ns / 1_000_000_000) as libc::time_t, tv_nsec: (ns % 1_000_000_000) as libc::c_long }
}

/// # Safety
/// Same contract as `time`.
#[no_mangle]
pub unsafe extern "C" fn __irs_time(t: *mut libc::time_t, _site: u64) -> libc::time_t {
    let Some(ns) = virtual_ns(libc::CLOCK_REALTIME) else {
        // SAFETY: forwarded unchanged.
        return unsafe { libc::time(t) };
    };
    let secs = (ns / 1_000_000_000) as libc::time_t;
    if !t.is_null() {
        // SAFETY: the caller's out-parameter (time's contract).
        unsafe { *t = secs };
    }
    secs
}

/// # Safety
/// Same contract as `clock_gettime`.
#[no_mangle]
pub unsafe extern "C" fn __irs_clock_gettime(clock: libc::clockid_t, ts: *mut libc::timespec, _site: u64) -> c_int {
    match virtual_ns(clock) {
        Some(ns) if !ts.is_null() => {
            // SAFETY: the caller's out-parameter (clock_gettime's contract).
            unsafe { *ts = timespec_of(ns) };
            0
        }
        // SAFETY: forwarded unchanged (a null `ts` fails there as it would).
        _ => unsafe { libc::clock_gettime(clock, ts) },
    }
}

/// # Safety
/// Same contract as `gettimeofday`.
#[no_mangle]
pub unsafe extern "C" fn __irs_gettimeofday(tv: *mut libc::timeval, tz: *mut c_void, _site: u64) -> c_int {
    match virtual_ns(libc::CLOCK_REALTIME) {
        Some(ns) if !tv.is_null() => {
            // SAFETY: the caller's out-parameters (gettimeofday's contract); the time zone, when
            // asked for, is UTC, as glibc reports it.
            unsafe {
                *tv = libc::timeval { tv_sec: (ns / 1_000_000_000) as libc::time_t, tv_usec: ((ns % 1_000_000_000) / 1000) as libc::suseconds_t };
                if !tz.is_null() {
                    std::ptr::write_bytes(tz as *mut u8, 0, 8);
                }
            }
            0
        }
        // SAFETY: forwarded unchanged.
        _ => unsafe { libc::gettimeofday(tv, tz as *mut libc::timezone) },
    }
}

extern "C" {
    fn clock() -> libc::clock_t;
}

/// `clock`: CPU time in `CLOCKS_PER_SEC` (10^6) units.
#[no_mangle]
pub extern "C" fn __irs_clock(_site: u64) -> libc::clock_t {
    match virtual_ns(libc::CLOCK_PROCESS_CPUTIME_ID) {
        Some(ns) => (ns / 1000) as libc::clock_t,
        // SAFETY: no preconditions.
        None => unsafe { clock() },
    }
}
