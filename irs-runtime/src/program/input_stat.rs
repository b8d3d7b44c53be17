//! What `fstat` says about input served from a capture (DESIGN §4 "Inputs"): the program must
//! see the original, not irs's copy. A file the program opens for reading is served from its
//! capture (`input_files`), and standard input that was a regular file from a sealed in-memory
//! copy (`irs run`); both are regular files with the right bytes, but with their own device,
//! inode, mode, owner and times. The pass routes `fstat` and `fstat64` here: a descriptor on a
//! served copy (known by its device and inode, so duplicates and inherited descriptors count
//! too) is described as its original: the file at the original path as it is now (its size the
//! copy's, which the program reads), or the description of standard input `irs run` passed in
//! `IRS_STDIN_STAT` (`shared_proto::stdin_stat`). Everything else is the C library's answer, unchanged.
//!
//! A pipe, socket, terminal or `/dev/null` on standard input is served as itself by `irs run`
//! (a pipe refilled with the captured bytes), so `lseek` and `isatty` need nothing here.

use shared_proto::stdin_stat::{decode, ENV_STDIN_STAT};
use std::ffi::c_int;
use std::path::PathBuf;
use std::sync::Mutex;

/// What a served copy stands for.
enum Original {
    /// The file at this path (described as it is when asked).
    Path(PathBuf),
    /// This description, taken when the input was captured.
    Fixed(Box<libc::stat>),
}

/// Served copies by (device, inode). A handful of entries: a linear search.
static SERVED: Mutex<Vec<(u64, u64, Original)>> = Mutex::new(Vec::new());

fn served() -> std::sync::MutexGuard<'static, Vec<(u64, u64, Original)>> {
    SERVED.lock().unwrap_or_else(|p| p.into_inner())
}

fn real_fstat(fd: c_int) -> Option<libc::stat> {
    // SAFETY: fstat fills the struct or fails; nothing else is touched.
    let mut st: libc::stat = unsafe { std::mem::zeroed() };
    (unsafe { libc::fstat(fd, &mut st) } == 0).then_some(st)
}

/// `fd` is a copy of the file at `original` (called when a capture is served).
pub fn served_copy(fd: c_int, original: PathBuf) {
    let Some(st) = real_fstat(fd) else { return };
    let mut s = served();
    if !s.iter().any(|(d, i, _)| *d == st.st_dev && *i == st.st_ino) {
        s.push((st.st_dev, st.st_ino, Original::Path(original)));
    }
}

/// At start-up: standard input is a copy of the file `irs run` described.
pub fn init() {
    let Some(text) = std::env::var_os(ENV_STDIN_STAT) else { return };
    // Not for the program's children: their standard input is whatever it gives them.
    // SAFETY: start-up, only the main thread exists.
    unsafe { std::env::remove_var(ENV_STDIN_STAT) };
    let (Some(original), Some(copy)) = (text.to_str().and_then(decode), real_fstat(0)) else { return };
    served().push((copy.st_dev, copy.st_ino, Original::Fixed(Box::new(original))));
}

/// The description of `st`'s original, if `st` describes a served copy.
fn original_of(st: &libc::stat) -> Option<libc::stat> {
    let s = served();
    let (_, _, o) = s.iter().find(|(d, i, _)| *d == st.st_dev && *i == st.st_ino)?;
    match o {
        Original::Fixed(f) => Some(**f),
        Original::Path(p) => {
            let meta = std::fs::metadata(p).ok()?;
            use std::os::unix::fs::MetadataExt;
            let mut out = *st;
            out.st_dev = meta.dev() as _;
            out.st_ino = meta.ino() as _;
            out.st_mode = meta.mode() as _;
            out.st_nlink = meta.nlink() as _;
            out.st_uid = meta.uid() as _;
            out.st_gid = meta.gid() as _;
            out.st_rdev = meta.rdev() as _;
            out.st_blksize = meta.blksize() as _;
            out.st_atime = meta.atime() as _;
            out.st_atime_nsec = meta.atime_nsec() as _;
            out.st_mtime = meta.mtime() as _;
            out.st_mtime_nsec = meta.mtime_nsec() as _;
            out.st_ctime = meta.ctime() as _;
            out.st_ctime_nsec = meta.ctime_nsec() as _;
            // The bytes the program reads are the copy's: its size and blocks stay.
            Some(out)
        }
    }
}

/// # Safety
/// Called by instrumented code in place of `fstat(fd, buf)`.
#[no_mangle]
pub unsafe extern "C" fn __irs_fstat(fd: c_int, buf: *mut libc::stat, _site: u64) -> c_int {
    // SAFETY: the program's own arguments.
    let r = unsafe { libc::fstat(fd, buf) };
    if r == 0 && !buf.is_null() {
        // SAFETY: fstat filled `*buf`.
        if let Some(o) = original_of(unsafe { &*buf }) {
            // SAFETY: as above.
            unsafe { *buf = o };
        }
    }
    r
}

/// # Safety
/// Called by instrumented code in place of `fstat64(fd, buf)`.
#[no_mangle]
pub unsafe extern "C" fn __irs_fstat64(fd: c_int, buf: *mut libc::stat64, site: u64) -> c_int {
    // SAFETY: on x86-64 glibc, `struct stat64` and `struct stat` are the same structure.
    unsafe { __irs_fstat(fd, buf as *mut libc::stat, site) }
}
