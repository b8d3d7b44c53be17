//! The runtime's mode, chosen once at start-up from the environment (`IRS_MODE`), before any
//! thread of the program exists.

use std::sync::atomic::{AtomicU8, Ordering};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    Off = 0,
    Record = 1,
    /// Started by the irs executor: a fork server of controlled executions.
    Explore = 2,
    /// Enforce an admissible prefix (`IRS_PREFIX=FILE`, set by `irs run`).
    Enforce = 3,
    /// No prefix, but `IRS_CHAOS=1`: callbacks only shake the schedule.
    Chaos = 4,
}

pub const MODE_VAR: &str = "IRS_MODE";
pub const TRACE_VAR: &str = "IRS_TRACE";
pub const PREFIX_VAR: &str = "IRS_PREFIX";
pub const CHAOS_VAR: &str = "IRS_CHAOS";
pub const DIVERGENCE_VAR: &str = "IRS_DIVERGENCE";
/// `IRS_SERIAL=1` (with `IRS_MODE=enforce`, no prefix): run serialised from the start.
pub const SERIAL_VAR: &str = "IRS_SERIAL";

static MODE: AtomicU8 = AtomicU8::new(Mode::Off as u8);

impl Mode {
    pub fn parse(value: Option<&str>) -> Result<Mode, String> {
        match value.map(str::trim) {
            None | Some("") | Some("off") => Ok(Mode::Off),
            Some("record") => Ok(Mode::Record),
            Some("explore") => Ok(Mode::Explore),
            Some("enforce") => Ok(Mode::Enforce),
            Some(other) => Err(format!("unknown {MODE_VAR}={other:?} (expected off, record, explore or enforce)")),
        }
    }
}

/// Set at start-up while only the main thread exists.
pub fn set(mode: Mode) {
    // Relaxed: written before any other thread is created; pthread_create orders it before
    // everything the new threads do.
    MODE.store(mode as u8, Ordering::Relaxed);
}

pub fn get() -> Mode {
    // Relaxed: see `set`; the value never changes after start-up.
    match MODE.load(Ordering::Relaxed) {
        1 => Mode::Record,
        2 => Mode::Explore,
        3 => Mode::Enforce,
        4 => Mode::Chaos,
        _ => Mode::Off,
    }
}

/// ENFORCE: a prefix is enforced, or the run is serialised.
pub(crate) fn enforcing() -> bool {
    get() == Mode::Enforce
}

/// EXPLORE: every thread is a fiber of the controlled scheduler; mutexes and joins are modelled
/// there (one fiber runs at a time, so the real pthread objects are not used).
pub(crate) fn explore() -> bool {
    get() == Mode::Explore
}

/// Nothing to do but the call itself (OFF, or a mode that does not watch this).
pub(crate) fn plain() -> bool {
    get() == Mode::Off
}

#[cfg(test)]
mod tests {
    use super::*;
    #[test]
    fn parses_modes() {
        assert_eq!(Mode::parse(None), Ok(Mode::Off));
        assert_eq!(Mode::parse(Some("record")), Ok(Mode::Record));
        assert!(Mode::parse(Some("enforce-everything")).unwrap_err().contains("unknown IRS_MODE"));
    }
}
