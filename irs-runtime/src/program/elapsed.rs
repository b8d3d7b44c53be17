//! How long a run the verifier makes to time a candidate anchor took from `main` to its end,
//! without the isolation's set-up (`irs_verifier::anchor_trial`; docs/src/service.md,
//! "Publishing"): when the verifier names a file (`IRS_ELAPSED_FILE`), the runtime writes the
//! microseconds from its start to the process's `exit` there.

use std::sync::OnceLock;
use std::time::Instant;

/// Where to write it, and since when.
static STARTED: OnceLock<(std::path::PathBuf, Instant)> = OnceLock::new();

/// The variable naming the file.
pub const ELAPSED_VAR: &str = "IRS_ELAPSED_FILE";

extern "C" fn write_elapsed() {
    if let Some((path, since)) = STARTED.get() {
        let _ = std::fs::write(path, since.elapsed().as_micros().to_string());
    }
}

/// At the program's start, with one thread: if the verifier asked, start the clock and write
/// the time at `exit` (a run that ends otherwise, a signal say, writes nothing).
pub fn start_if_asked() {
    let Some(path) = std::env::var_os(ELAPSED_VAR) else { return };
    // SAFETY: only the main thread exists; programs this one starts are not timed.
    unsafe { std::env::remove_var(ELAPSED_VAR) };
    if STARTED.set((path.into(), Instant::now())).is_ok() {
        // SAFETY: registering a function with no preconditions, once.
        unsafe { libc::atexit(write_elapsed) };
    }
}
