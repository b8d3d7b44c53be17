//! `IRS_CHAOS=1` / `irs run --chaos` (DESIGN §4): random short yields and delays at callbacks, to
//! shake a program's schedules in tests. Off unless asked for.

use std::cell::Cell;
use std::sync::atomic::{AtomicBool, Ordering};

static ON: AtomicBool = AtomicBool::new(false);

thread_local! {
    static RNG: Cell<u64> = const { Cell::new(0) };
}

pub fn enable() {
    // Relaxed: set at start-up before any other thread exists.
    ON.store(true, Ordering::Relaxed);
}

pub fn enabled() -> bool {
    // Relaxed: fixed after start-up.
    ON.load(Ordering::Relaxed)
}

fn next() -> u64 {
    RNG.with(|r| {
        let mut x = r.get();
        if x == 0 {
            // Seed per thread from the clock and the thread's stack address.
            let t = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_nanos() as u64).unwrap_or(1);
            x = t ^ (&x as *const u64 as u64).rotate_left(17) | 1;
        }
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        r.set(x);
        x
    })
}

/// At a callback: sometimes yield the processor, sometimes sleep a few microseconds.
pub fn perturb() {
    if !enabled() {
        return;
    }
    let r = next();
    match r % 16 {
        0..=2 => std::thread::yield_now(),
        3 => std::thread::sleep(std::time::Duration::from_micros(r >> 58)),
        _ => {}
    }
}
