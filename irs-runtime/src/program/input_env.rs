//! The environment variables the program reads are part of its input (DESIGN §4 "Inputs";
//! `shared_proto::input_env`). The pass routes `getenv` and `secure_getenv` here, and puts
//! [`__irs_environ_read`] in front of every use of `environ` / `__environ` (and in front of a
//! `main` that uses its third argument): the program reads its environment whole. With
//! `IRS_INPUT_FILES=DIR` (the captures of the input's verification):
//!
//! - **EXPLORE**: each variable read is kept in `DIR/env/` with the value the program was
//!   started with (not one it set itself since: `setenv`, `putenv`, `unsetenv` and `clearenv`
//!   change what later reads return, never what the input is); a whole read leaves the marker.
//! - **ENFORCE**: the first read of each variable compares the value the run was started with
//!   against the capture; a variable no verified execution read, another value, or a whole read
//!   where the verification made none, means the run is on an input no verification covers
//!   (`enforcer::input_diverged`).
//!
//! The call itself is always the C library's: the program sees its own environment.

use crate::mode::{self, Mode};
use shared_proto::input_env::EnvCaptures;
use shared_proto::SiteId;
use std::collections::HashMap;
use std::ffi::{c_char, CStr};
use std::os::unix::ffi::OsStringExt;
use std::sync::{Mutex, OnceLock};

struct Config {
    captures: EnvCaptures,
    /// The environment the program was started with (what its input is).
    initial: HashMap<Vec<u8>, Vec<u8>>,
    /// Variables checked already under ENFORCE (each is checked once per run).
    checked: Mutex<Vec<Vec<u8>>>,
}

static CONFIG: OnceLock<Option<Config>> = OnceLock::new();

/// Read the configuration and the starting environment (at start-up, while only `main`
/// exists, before the program can change its environment).
pub fn init() {
    CONFIG.get_or_init(|| {
        let dir = std::env::var_os(shared_proto::input_files::ENV_DIR).filter(|d| !d.is_empty())?;
        let initial = std::env::vars_os().map(|(k, v)| (k.into_vec(), v.into_vec())).collect();
        Some(Config { captures: EnvCaptures::in_files_dir(std::path::Path::new(&dir)), initial, checked: Mutex::new(Vec::new()) })
    });
}

fn config() -> Option<&'static Config> {
    CONFIG.get().and_then(Option::as_ref)
}

fn unsupported(site: u64, why: String) -> ! {
    let (at, _) = crate::program::program_info::site_text(SiteId(site));
    crate::explore::scheduler::finish(shared_proto::explore_buffer::ChildOutcome::Unsupported(&format!("getenv at {at}: {why}")))
}

/// The program reads variable `name`.
fn read(cfg: &Config, name: &[u8], site: u64) {
    // irs's own variables are never part of an input.
    if name.starts_with(b"IRS_") {
        return;
    }
    let initial = cfg.initial.get(name).map(Vec::as_slice);
    match mode::get() {
        Mode::Explore => {
            if cfg.captures.lookup(name).is_none() {
                if let Err(e) = cfg.captures.record(name, initial) {
                    unsupported(site, format!("the variable {} cannot be kept in {} ({e})", String::from_utf8_lossy(name), cfg.captures.dir().display()));
                }
            }
        }
        Mode::Enforce => {
            {
                let mut checked = cfg.checked.lock().unwrap_or_else(|p| p.into_inner());
                if checked.iter().any(|n| n == name) {
                    return;
                }
                checked.push(name.to_vec());
            }
            let why = match cfg.captures.lookup(name) {
                Some(verified) if verified.as_deref() == initial => return,
                Some(verified) => format!(
                    "the variable {} is {} (the verified input: {})",
                    String::from_utf8_lossy(name),
                    shared_proto::input_env::describe(&initial.map(<[u8]>::to_vec)),
                    shared_proto::input_env::describe(&verified)
                ),
                None => format!("it reads the variable {}, which no verified execution of this input read", String::from_utf8_lossy(name)),
            };
            crate::enforce::enforcer::input_diverged(&why);
        }
        _ => {}
    }
}

/// # Safety
/// Called by instrumented code in place of `getenv(name)`.
#[no_mangle]
pub unsafe extern "C" fn __irs_getenv(name: *const c_char, site: u64) -> *mut c_char {
    if let (Some(cfg), false) = (config(), name.is_null()) {
        // SAFETY: getenv's argument is a NUL-terminated string.
        read(cfg, unsafe { CStr::from_ptr(name) }.to_bytes(), site);
    }
    // SAFETY: the program's own argument.
    unsafe { libc::getenv(name) }
}

extern "C" {
    fn secure_getenv(name: *const c_char) -> *mut c_char;
}

/// # Safety
/// Called by instrumented code in place of `secure_getenv(name)`.
#[no_mangle]
pub unsafe extern "C" fn __irs_secure_getenv(name: *const c_char, site: u64) -> *mut c_char {
    if let (Some(cfg), false) = (config(), name.is_null()) {
        // SAFETY: as in `__irs_getenv`.
        read(cfg, unsafe { CStr::from_ptr(name) }.to_bytes(), site);
    }
    // SAFETY: the program's own argument.
    unsafe { secure_getenv(name) }
}

/// The program is about to read its environment whole (`environ`, `main`'s third argument).
#[no_mangle]
pub extern "C" fn __irs_environ_read(site: u64) {
    let Some(cfg) = config() else { return };
    match mode::get() {
        Mode::Explore => {
            if let Err(e) = cfg.captures.record_whole() {
                unsupported(site, format!("the environment cannot be marked as read in {} ({e})", cfg.captures.dir().display()));
            }
        }
        Mode::Enforce if !cfg.captures.whole() => {
            let first = {
                let mut checked = cfg.checked.lock().unwrap_or_else(|p| p.into_inner());
                let first = !checked.iter().any(|n| n.is_empty());
                // The empty name stands for the whole environment.
                checked.push(Vec::new());
                first
            };
            if first {
                crate::enforce::enforcer::input_diverged("it reads its environment whole (environ), which no verified execution of this input did");
            }
        }
        _ => {}
    }
}
