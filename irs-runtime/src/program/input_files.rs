//! Files the program opens for reading are part of its input (DESIGN §4 "Inputs").
//! The pass routes `open`, `openat`, `fopen` and `freopen` (and their `64` names) here, in
//! every thread, free ones included. With `IRS_INPUT_FILES=DIR` (the captures of the input's
//! verification, `shared_proto::input_files`):
//!
//! - **EXPLORE** (the verifier's runs): a regular file opened for reading is read from its
//!   capture, taken at the first open in any execution, so every execution of the verification
//!   reads the same bytes; a name with no file is captured as absent (the open fails with
//!   `ENOENT` in every execution). A file the verification cannot capture (a FIFO, a socket, a
//!   device other than `/dev/null`, `/dev/zero` and `/dev/full`, one longer than the capture
//!   limit, or an existing file opened for both reading and writing) ends the execution as
//!   unsupported, naming the call, the file and its source line. The capture is taken by a
//!   child process, so that the execution that takes it leaves the program's heap as every
//!   later one does.
//! - **ENFORCE** (a production run under the input's verification): before the program reads a
//!   byte, the file is compared with the capture; the same bytes are read from the capture
//!   (they cannot change under the program afterwards). A file that differs, or that no
//!   verified execution opened, means the run is on an input no verification covers: the
//!   runtime reports it and reacts (`enforcer::input_diverged`), and the program reads the file
//!   as it is.
//!
//! Everywhere else (no captures given, OFF, RECORD, chaos) the call is the C library's.
//! Files opened for writing only, directories and file metadata are not part of the input;
//! `fstat` on a served capture describes the original file (`input_stat`).

use crate::mode::{self, Mode};
use shared_proto::input_files::{self, Captured, FileCaptures};
use shared_proto::SiteId;
use std::ffi::{c_char, c_int, CStr, CString};
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;


struct Config {
    captures: FileCaptures,
    limit: u64,
}

static CONFIG: OnceLock<Option<Config>> = OnceLock::new();

/// Read the configuration from the environment (at start-up, while only `main` exists).
pub fn init() {
    CONFIG.get_or_init(|| {
        let dir = std::env::var_os(input_files::ENV_DIR).filter(|d| !d.is_empty())?;
        let limit = std::env::var(input_files::ENV_LIMIT).ok().and_then(|v| v.trim().parse().ok()).unwrap_or(input_files::DEFAULT_LIMIT);
        Some(Config { captures: FileCaptures::new(PathBuf::from(dir)), limit })
    });
}

/// What the wrapper does with an open.
enum Decision {
    /// The C library's call, unchanged.
    Pass,
    /// This descriptor (the capture, opened read-only) instead.
    Serve(c_int),
    /// Fail with this `errno`.
    Fail(c_int),
}

/// The path an open names, absolute and normal (`None`: it cannot be known, so it is passed).
fn resolve(dirfd: Option<c_int>, path: &CStr) -> Option<PathBuf> {
    let p = Path::new(std::ffi::OsStr::from_bytes(path.to_bytes()));
    let base = match dirfd {
        Some(fd) if fd != libc::AT_FDCWD && !p.is_absolute() => std::fs::read_link(format!("/proc/self/fd/{fd}")).ok()?,
        _ if p.is_absolute() => PathBuf::from("/"),
        _ => std::env::current_dir().ok()?,
    };
    Some(input_files::normalise(&base, p))
}

/// Devices whose bytes do not depend on anything outside the program.
fn fixed_device(path: &Path) -> bool {
    matches!(path.to_str(), Some("/dev/null" | "/dev/zero" | "/dev/full"))
}

/// Room for the path of a capture's file (the directory, a 16-digit name and a suffix).
const CAPTURE_PATH_MAX: usize = 4096;

/// Write `<dir>/<entry name of key><suffix>` and a NUL into `buf`; `false` when it does not fit.
fn entry_path(buf: &mut [u8; CAPTURE_PATH_MAX], dir: &[u8], key: &Path, suffix: &[u8]) -> bool {
    let name = input_files::entry_name_bytes(key);
    let base = dir.len() + 1 + name.len();
    if base + suffix.len() + 1 > buf.len() {
        return false;
    }
    buf[..dir.len()].copy_from_slice(dir);
    buf[dir.len()] = b'/';
    buf[dir.len() + 1..base].copy_from_slice(&name);
    buf[base..base + suffix.len()].copy_from_slice(suffix);
    buf[base + suffix.len()] = 0;
    true
}

/// Does the NUL-terminated path in `buf` exist?
fn exists(buf: &[u8; CAPTURE_PATH_MAX]) -> bool {
    // SAFETY: `buf` holds a NUL-terminated path (`entry_path`).
    unsafe { libc::access(buf.as_ptr() as *const c_char, libc::F_OK) == 0 }
}

/// Whether `captures` holds an entry for `key` (a file's path, a variable's name), found with no
/// allocation: in EXPLORE, whether this execution is the first to read it must not show in the
/// program's heap.
pub fn captured_in_place(captures: &FileCaptures, key: &Path) -> bool {
    let mut buf = [0u8; CAPTURE_PATH_MAX];
    let dir = captures.dir().as_os_str().as_bytes();
    [&b".data"[..], b".none"].into_iter().any(|suffix| entry_path(&mut buf, dir, key, suffix) && exists(&buf))
}

/// What the captures say of `path`, found with no allocation (`shared_proto::input_files`
/// names a capture's files by the stable hash of the path): `None` if there is no capture (or
/// its name does not fit).
fn lookup_in_place(cfg: &Config, path: &Path, flags: c_int, buf: &mut [u8; CAPTURE_PATH_MAX]) -> Option<Decision> {
    let dir = cfg.captures.dir().as_os_str().as_bytes();
    if entry_path(buf, dir, path, b".data") && exists(buf) {
        // SAFETY: a NUL-terminated path, as just probed; the descriptor is the caller's.
        let fd = unsafe { libc::open(buf.as_ptr() as *const c_char, libc::O_RDONLY | (flags & libc::O_CLOEXEC)) };
        if fd < 0 {
            // SAFETY: errno of this thread.
            return Some(Decision::Fail(unsafe { *libc::__errno_location() }));
        }
        crate::program::input_stat::served_copy(fd, path.to_path_buf());
        return Some(Decision::Serve(fd));
    }
    (entry_path(buf, dir, path, b".none") && exists(buf)).then_some(Decision::Fail(libc::ENOENT))
}

/// Serve the capture `data` of the file at `original` (`fstat` on it describes the original:
/// `input_stat`).
fn open_capture(data: &Path, original: &Path, flags: c_int) -> Decision {
    let Ok(c) = CString::new(data.as_os_str().as_bytes()) else { return Decision::Fail(libc::EINVAL) };
    // SAFETY: a NUL-terminated path; the descriptor returned is the caller's.
    let fd = unsafe { libc::open(c.as_ptr(), libc::O_RDONLY | (flags & libc::O_CLOEXEC)) };
    if fd < 0 {
        // SAFETY: errno of this thread.
        Decision::Fail(unsafe { *libc::__errno_location() })
    } else {
        crate::program::input_stat::served_copy(fd, original.to_path_buf());
        Decision::Serve(fd)
    }
}

fn unsupported(site: u64, call: &str, why: String) -> ! {
    let (at, _) = crate::program::program_info::site_text(SiteId(site));
    crate::explore::scheduler::finish(shared_proto::explore_buffer::ChildOutcome::Unsupported(&format!("{call} at {at}: {why}")))
}

fn explore(cfg: &Config, path: &Path, flags: c_int, site: u64, call: &str) -> Decision {
    let meta = std::fs::metadata(path);
    if meta.as_ref().is_ok_and(|m| m.is_dir()) || fixed_device(path) {
        return Decision::Pass;
    }
    if flags & libc::O_ACCMODE == libc::O_RDWR {
        // Read and written: the bytes read back depend on the earlier executions' writes.
        let existing = meta.is_ok_and(|m| m.len() > 0);
        if existing && flags & libc::O_TRUNC == 0 {
            unsupported(site, call, format!("{} is opened for reading and writing (a file both read and written is not an input irs can capture)", path.display()));
        }
        return Decision::Pass;
    }
    // Looked up without allocating, before and after the capture alike: whether this execution
    // is the first to open the file must not show in the program's heap.
    let mut buf = [0u8; CAPTURE_PATH_MAX];
    if let Some(d) = lookup_in_place(cfg, path, flags, &mut buf) {
        return d;
    }
    if capture_aside(cfg, path) {
        if let Some(d) = lookup_in_place(cfg, path, flags, &mut buf) {
            return d;
        }
    }
    // The capture could not be taken aside: take it here, to end the execution with the reason
    // (or to go on if it can be taken after all).
    let kept = match input_files::read_input_file(path, cfg.limit) {
        Ok(bytes) => cfg.captures.record(path, bytes.as_deref()),
        Err(why) => unsupported(site, call, format!("{} {why}", path.display())),
    };
    if let Err(e) = kept {
        unsupported(site, call, format!("a capture of {} cannot be kept in {} ({e})", path.display(), cfg.captures.dir().display()));
    }
    match cfg.captures.lookup(path) {
        Some(Captured::Bytes(data)) => open_capture(&data, path, flags),
        _ => Decision::Fail(libc::ENOENT),
    }
}

/// Take the capture of `path` in a child process; whether it was taken. The execution that opens
/// a file first must leave its memory as every later one does (which finds the capture there):
/// reading the file and writing its capture allocate, and an execution's heap is the program's,
/// so a capture taken in the execution would give the program other addresses after it than a
/// later execution gets (the two runs of one schedule would differ).
fn capture_aside(cfg: &Config, path: &Path) -> bool {
    aside(|| matches!(input_files::read_input_file(path, cfg.limit), Ok(bytes) if cfg.captures.record(path, bytes.as_deref()).is_ok()))
}

/// Run `work` in a child process (whether it succeeded): in EXPLORE, what allocates in the
/// program's heap only in the first execution that needs it (taking a capture) leaves the heap
/// as every later execution has it.
pub fn aside(work: impl FnOnce() -> bool) -> bool {
    // SAFETY: one OS thread runs an execution (every logical thread is a fiber), so fork is
    // safe; the child only does `work` (reading and writing files) and leaves with `_exit`,
    // running none of the program's exit handlers.
    unsafe {
        let pid = libc::fork();
        if pid == 0 {
            let ok = work();
            libc::_exit(if ok { 0 } else { 1 });
        }
        if pid < 0 {
            return false;
        }
        let mut status = 0;
        while libc::waitpid(pid, &mut status, 0) < 0 && *libc::__errno_location() == libc::EINTR {}
        libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0
    }
}

fn enforce(cfg: &Config, path: &Path, flags: c_int) -> Decision {
    if flags & libc::O_ACCMODE != libc::O_RDONLY || fixed_device(path) || std::fs::metadata(path).is_ok_and(|m| m.is_dir()) {
        return Decision::Pass;
    }
    let why = match cfg.captures.lookup(path) {
        Some(captured) => match input_files::differs(path, &captured, cfg.limit) {
            None => {
                return match captured {
                    Captured::Bytes(data) => open_capture(&data, path, flags),
                    Captured::Absent => Decision::Pass,
                }
            }
            Some(why) => format!("the file {} {why}", path.display()),
        },
        None => format!("it opens {}, which no verified execution of this input opened", path.display()),
    };
    crate::enforce::enforcer::input_diverged(&why);
    Decision::Pass
}

/// What to do with an open of `path` (relative to `dirfd`) with `flags`.
fn decide(dirfd: Option<c_int>, path: *const c_char, flags: c_int, site: u64, call: &str) -> Decision {
    let Some(Some(cfg)) = CONFIG.get() else { return Decision::Pass };
    if path.is_null() || flags & libc::O_ACCMODE == libc::O_WRONLY {
        return Decision::Pass;
    }
    // SAFETY: the program passes a NUL-terminated path to open.
    let Some(p) = resolve(dirfd, unsafe { CStr::from_ptr(path) }) else { return Decision::Pass };
    match mode::get() {
        Mode::Explore => explore(cfg, &p, flags, site, call),
        Mode::Enforce => enforce(cfg, &p, flags),
        _ => Decision::Pass,
    }
}

fn set_errno(e: c_int) {
    // SAFETY: errno of this thread.
    unsafe { *libc::__errno_location() = e };
}

/// `fopen`'s mode as `open`'s flags (what matters here: reading, writing, truncation).
fn fopen_flags(mode: *const c_char) -> c_int {
    if mode.is_null() {
        return libc::O_RDONLY;
    }
    // SAFETY: fopen's mode is a NUL-terminated string.
    let m = unsafe { CStr::from_ptr(mode) }.to_bytes();
    let plus = m.contains(&b'+');
    let cloexec = if m.contains(&b'e') { libc::O_CLOEXEC } else { 0 };
    cloexec
        | match (m.first(), plus) {
            (Some(b'r'), false) => libc::O_RDONLY,
            (Some(b'r'), true) => libc::O_RDWR,
            (Some(b'w'), false) => libc::O_WRONLY | libc::O_TRUNC,
            (Some(b'w'), true) => libc::O_RDWR | libc::O_TRUNC,
            (Some(b'a'), false) => libc::O_WRONLY,
            (Some(b'a'), true) => libc::O_RDWR,
            _ => libc::O_RDONLY,
        }
}

/// # Safety
/// Called by instrumented code in place of `open(path, flags[, mode])`.
#[no_mangle]
pub unsafe extern "C" fn __irs_open(path: *const c_char, flags: c_int, mode: c_int, site: u64) -> c_int {
    match decide(None, path, flags, site, "open") {
        // SAFETY: the program's own arguments.
        Decision::Pass => unsafe { libc::open(path, flags, mode as libc::c_uint) },
        Decision::Serve(fd) => fd,
        Decision::Fail(e) => {
            set_errno(e);
            -1
        }
    }
}

/// # Safety
/// Called by instrumented code in place of `openat(dirfd, path, flags[, mode])`.
#[no_mangle]
pub unsafe extern "C" fn __irs_openat(dirfd: c_int, path: *const c_char, flags: c_int, mode: c_int, site: u64) -> c_int {
    match decide(Some(dirfd), path, flags, site, "openat") {
        // SAFETY: the program's own arguments.
        Decision::Pass => unsafe { libc::openat(dirfd, path, flags, mode as libc::c_uint) },
        Decision::Serve(fd) => fd,
        Decision::Fail(e) => {
            set_errno(e);
            -1
        }
    }
}

/// # Safety
/// Called by instrumented code in place of `fopen(path, mode)`.
#[no_mangle]
pub unsafe extern "C" fn __irs_fopen(path: *const c_char, mode: *const c_char, site: u64) -> *mut libc::FILE {
    match decide(None, path, fopen_flags(mode), site, "fopen") {
        // SAFETY: the program's own arguments.
        Decision::Pass => unsafe { libc::fopen(path, mode) },
        Decision::Serve(fd) => {
            // SAFETY: `fd` is ours (just opened); on failure it is closed again.
            let f = unsafe { libc::fdopen(fd, mode) };
            if f.is_null() {
                // SAFETY: as above.
                unsafe { libc::close(fd) };
            }
            f
        }
        Decision::Fail(e) => {
            set_errno(e);
            std::ptr::null_mut()
        }
    }
}

/// # Safety
/// Called by instrumented code in place of `freopen(path, mode, stream)`.
#[no_mangle]
pub unsafe extern "C" fn __irs_freopen(path: *const c_char, mode: *const c_char, stream: *mut libc::FILE, site: u64) -> *mut libc::FILE {
    match decide(None, path, fopen_flags(mode), site, "freopen") {
        // SAFETY: the program's own arguments.
        Decision::Pass => unsafe { libc::freopen(path, mode, stream) },
        Decision::Serve(fd) => {
            let via = CString::new(format!("/proc/self/fd/{fd}")).expect("no NUL in a number");
            // SAFETY: reopen the program's stream on the capture; our descriptor is closed after.
            let f = unsafe { libc::freopen(via.as_ptr(), mode, stream) };
            // SAFETY: `fd` is ours.
            unsafe { libc::close(fd) };
            f
        }
        Decision::Fail(e) => {
            set_errno(e);
            std::ptr::null_mut()
        }
    }
}
