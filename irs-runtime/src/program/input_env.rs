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
use std::ffi::{c_char, CStr};
use std::sync::{Mutex, OnceLock};

/// The environment the program was started with: its `NAME=value` entries, each followed by a
/// NUL, copied in one buffer (one allocation at start; a program reads few variables, each
/// found by a scan).
struct InitialEnv(Vec<u8>);

impl InitialEnv {
    fn now() -> InitialEnv {
        extern "C" {
            static environ: *const *const c_char;
        }
        let mut all = Vec::with_capacity(4096);
        // SAFETY: called at start-up, while only `main` exists and before the program runs, so
        // nothing changes the environment meanwhile; `environ` is the C library's array of
        // NUL-terminated entries, ended by a null pointer.
        unsafe {
            let mut entry = environ;
            while !entry.is_null() && !(*entry).is_null() {
                all.extend_from_slice(CStr::from_ptr(*entry).to_bytes_with_nul());
                entry = entry.add(1);
            }
        }
        InitialEnv(all)
    }

    /// The value `name` had (`None`: it was not set).
    fn get(&self, name: &[u8]) -> Option<&[u8]> {
        self.0.split(|b| *b == 0).find_map(|e| e.strip_prefix(name)?.strip_prefix(b"="))
    }
}

struct Config {
    captures: EnvCaptures,
    /// The environment the program was started with (what its input is).
    initial: InitialEnv,
    /// Variables checked already under ENFORCE (each is checked once per run).
    checked: Mutex<Vec<Vec<u8>>>,
}

static CONFIG: OnceLock<Option<Config>> = OnceLock::new();

/// Read the configuration and the starting environment (at start-up, while only `main`
/// exists, before the program can change its environment).
pub fn init() {
    CONFIG.get_or_init(|| {
        let dir = std::env::var_os(shared_proto::input_files::ENV_DIR).filter(|d| !d.is_empty())?;
        let initial = InitialEnv::now();
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
    let initial = cfg.initial.get(name);
    match mode::get() {
        Mode::Explore => {
            // Looked up without allocating and kept by a child process: the first execution to
            // read the variable must leave the program's heap as every later one does.
            use std::os::unix::ffi::OsStrExt;
            let key = std::path::Path::new(std::ffi::OsStr::from_bytes(name));
            if !crate::program::input_files::captured_in_place(cfg.captures.files(), key)
                && !crate::program::input_files::aside(|| cfg.captures.record(name, initial).is_ok())
            {
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
            if cfg.captures.whole() || crate::program::input_files::aside(|| cfg.captures.record_whole().is_ok()) {
                return;
            }
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
