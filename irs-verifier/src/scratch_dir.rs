//! The verifier's temporary directories: its scratch space (DESIGN §7, "an explored execution
//! does no harm"). The directory over which an explored program builds its private view of the
//! file system (the runtime's `sandbox` module mounts over it in a mount namespace of its own,
//! so outside that namespace it stays empty), the one real directory an isolated run sees, and
//! the captures of the files a verification's program reads.
//!
//! Each is `$TMPDIR/irs-<kind>-<pid>-<n>`, leased by an exclusive `flock` on the file beside it,
//! `irs-<kind>-<pid>-<n>.lease`, which its verifier holds for as long as the directory lives and
//! removes with it. A verifier killed mid-run (a timeout's `SIGKILL`, a stopped worker) leaves
//! both behind, but the kernel drops its lock: the first directory a verifier makes sweeps the
//! leftovers, every directory of this form whose lease nobody holds and that is at least a
//! minute old (a lease file just made is not locked yet). Only the user's own entries are
//! touched. The empty `irs-sandbox-<pid>-<n>` directories left by builds that had no leases are
//! removed too (an empty directory only, never anything in one).

use std::fs::File;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, SystemTime};

/// Whether the environment turned isolation off (`IRS_SANDBOX=off`).
pub fn disabled_by_environment() -> bool {
    std::env::var("IRS_SANDBOX").is_ok_and(|v| v == "off" || v == "0")
}

/// What a directory is for: its name's `<kind>`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// Mounted over by an explored program, or the one real directory of an isolated run.
    Sandbox,
    /// A verification's captures of the files its program reads.
    Files,
}

impl Kind {
    fn name(self) -> &'static str {
        match self {
            Kind::Sandbox => "sandbox",
            Kind::Files => "files",
        }
    }
}

/// A leased directory of our own, removed with what it holds (and its lease) on drop.
#[derive(Debug)]
pub struct ScratchDir {
    path: PathBuf,
    lease_path: PathBuf,
    /// Holds the lease's lock until dropped (closing the file releases it).
    _lease: File,
}

/// How old an unlocked lease must be before a sweep takes its directory.
const SWEEP_AGE: Duration = Duration::from_secs(60);

impl ScratchDir {
    pub fn create(kind: Kind) -> std::io::Result<ScratchDir> {
        static SWEPT: std::sync::Once = std::sync::Once::new();
        let base = std::env::temp_dir();
        SWEPT.call_once(|| sweep(&base, SWEEP_AGE));
        // Relaxed: only makes names unique within this process.
        static NEXT: AtomicU64 = AtomicU64::new(0);
        loop {
            let n = NEXT.fetch_add(1, Ordering::Relaxed);
            let stem = format!("irs-{}-{}-{n}", kind.name(), std::process::id());
            let lease_path = base.join(format!("{stem}.lease"));
            let lease = match std::fs::OpenOptions::new().write(true).create_new(true).open(&lease_path) {
                Ok(f) => f,
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
                Err(e) => return Err(e),
            };
            lock(&lease, true)?;
            let path = base.join(&stem);
            let mut b = std::fs::DirBuilder::new();
            std::os::unix::fs::DirBuilderExt::mode(&mut b, 0o700);
            match b.create(&path) {
                Ok(()) => {
                    let path = std::path::absolute(&path).unwrap_or(path);
                    return Ok(ScratchDir { path, lease_path, _lease: lease });
                }
                Err(e) => {
                    let _ = std::fs::remove_file(&lease_path);
                    if e.kind() == std::io::ErrorKind::AlreadyExists {
                        continue;
                    }
                    return Err(e);
                }
            }
        }
    }

    pub fn path(&self) -> &Path {
        &self.path
    }
}

impl Drop for ScratchDir {
    fn drop(&mut self) {
        // A sandbox directory is empty outside the program's namespace (a program still running
        // keeps its mounts in its own namespace, not here); the others hold what the runs left.
        let _ = std::fs::remove_dir_all(&self.path);
        let _ = std::fs::remove_file(&self.lease_path);
    }
}

/// Take an exclusive lock on `f`, waiting for it (`wait`) or not: `Ok(false)` when another
/// process holds it.
fn lock(f: &File, wait: bool) -> std::io::Result<bool> {
    use std::os::fd::AsRawFd;
    let op = if wait { libc::LOCK_EX } else { libc::LOCK_EX | libc::LOCK_NB };
    // SAFETY: `flock` on a descriptor this `File` owns.
    if unsafe { libc::flock(f.as_raw_fd(), op) } == 0 {
        return Ok(true);
    }
    let e = std::io::Error::last_os_error();
    if e.raw_os_error() == Some(libc::EWOULDBLOCK) { Ok(false) } else { Err(e) }
}

/// Remove from `base` the scratch directories of verifiers that are gone: every
/// `irs-<kind>-<pid>-<n>` whose lease is unlocked and at least `age` old, and every empty
/// `irs-sandbox-<pid>-<n>` without a lease at least `age` old. Entries of other users are left
/// alone; errors are ignored (a sweep is housekeeping).
fn sweep(base: &Path, age: Duration) {
    // SAFETY: getuid cannot fail.
    let me = unsafe { libc::getuid() };
    let Ok(entries) = std::fs::read_dir(base) else { return };
    let old = |m: &std::fs::Metadata| m.uid() == me && m.modified().ok().and_then(|t| SystemTime::now().duration_since(t).ok()).is_some_and(|d| d >= age);
    for e in entries.flatten() {
        let name = e.file_name();
        let Some(name) = name.to_str() else { continue };
        let Some(stem) = name.strip_prefix("irs-") else { continue };
        if let Some(stem) = stem.strip_suffix(".lease") {
            if !is_scratch_stem(stem) {
                continue;
            }
            let lease_path = e.path();
            let Ok(m) = std::fs::symlink_metadata(&lease_path) else { continue };
            if !m.is_file() || !old(&m) {
                continue;
            }
            let Ok(f) = std::fs::OpenOptions::new().write(true).open(&lease_path) else { continue };
            if lock(&f, false).unwrap_or(false) {
                let dir = base.join(format!("irs-{stem}"));
                if std::fs::symlink_metadata(&dir).is_ok_and(|d| d.is_dir() && d.uid() == me) {
                    let _ = std::fs::remove_dir_all(&dir);
                }
                let _ = std::fs::remove_file(&lease_path);
            }
        } else if stem.starts_with("sandbox-") && is_scratch_stem(stem) && !base.join(format!("{name}.lease")).exists() {
            // Left by a build without leases: removed only if empty (`remove_dir` fails
            // otherwise).
            if std::fs::symlink_metadata(e.path()).is_ok_and(|m| m.is_dir() && old(&m)) {
                let _ = std::fs::remove_dir(e.path());
            }
        }
    }
}

/// Whether `stem` is `<kind>-<pid>-<n>` for one of our kinds.
fn is_scratch_stem(stem: &str) -> bool {
    let Some(rest) = [Kind::Sandbox, Kind::Files].iter().find_map(|k| stem.strip_prefix(k.name()).and_then(|r| r.strip_prefix('-'))) else {
        return false;
    };
    let mut parts = rest.split('-');
    let digits = |p: Option<&str>| p.is_some_and(|p| !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit()));
    digits(parts.next()) && digits(parts.next()) && parts.next().is_none()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn base(name: &str) -> PathBuf {
        let d = std::env::temp_dir().join(format!("irs-scratch-test-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(&d).unwrap();
        d
    }

    #[test]
    fn names_of_scratch_directories_are_recognised_and_nothing_else() {
        assert!(is_scratch_stem("sandbox-12-0") && is_scratch_stem("files-7-31"));
        for s in ["sandbox-12", "sandbox-12-0-1", "sandbox-x-0", "store-1-2", "sandbox--1", "1000", "files-1-"] {
            assert!(!is_scratch_stem(s), "{s}");
        }
    }

    #[test]
    fn a_sweep_takes_what_no_live_lease_holds_and_nothing_else() {
        let b = base("sweep");
        // Gone: an unlocked lease and its directory, with a file in it.
        std::fs::create_dir(b.join("irs-files-1-0")).unwrap();
        std::fs::write(b.join("irs-files-1-0/captured"), b"x").unwrap();
        std::fs::write(b.join("irs-files-1-0.lease"), b"").unwrap();
        // Alive: the lease is locked by an open description (as another verifier's would be).
        std::fs::create_dir(b.join("irs-sandbox-2-0")).unwrap();
        let held = std::fs::OpenOptions::new().write(true).create(true).truncate(false).open(b.join("irs-sandbox-2-0.lease")).unwrap();
        assert!(lock(&held, false).unwrap());
        // Left by a build without leases: an empty one goes, one with something in it stays.
        std::fs::create_dir(b.join("irs-sandbox-3-0")).unwrap();
        std::fs::create_dir(b.join("irs-sandbox-3-1")).unwrap();
        std::fs::write(b.join("irs-sandbox-3-1/keep"), b"").unwrap();
        // Not ours by name.
        std::fs::create_dir(b.join("irs-other")).unwrap();
        std::fs::write(b.join("irs-other.lease"), b"").unwrap();
        // Too young: a lease just made may not be locked yet.
        sweep(&b, Duration::from_secs(3600));
        assert!(b.join("irs-files-1-0/captured").exists() && b.join("irs-sandbox-3-0").exists());
        sweep(&b, Duration::ZERO);
        assert!(!b.join("irs-files-1-0").exists() && !b.join("irs-files-1-0.lease").exists(), "a dead verifier's directory and lease go");
        assert!(b.join("irs-sandbox-2-0").exists() && b.join("irs-sandbox-2-0.lease").exists(), "a live lease keeps its directory");
        assert!(!b.join("irs-sandbox-3-0").exists(), "an empty leftover without a lease goes");
        assert!(b.join("irs-sandbox-3-1/keep").exists(), "a leftover with something in it stays");
        assert!(b.join("irs-other").exists() && b.join("irs-other.lease").exists(), "other names stay");
        drop(held);
        sweep(&b, Duration::ZERO);
        assert!(!b.join("irs-sandbox-2-0").exists(), "once its holder is gone, the lease is free");
        let _ = std::fs::remove_dir_all(&b);
    }

    #[test]
    fn a_directory_and_its_lease_live_as_long_as_the_value() {
        let d = ScratchDir::create(Kind::Files).unwrap();
        let lease = PathBuf::from(format!("{}.lease", d.path().display()));
        std::fs::write(d.path().join("f"), b"x").unwrap();
        let other = std::fs::OpenOptions::new().write(true).open(&lease).unwrap();
        assert!(!lock(&other, false).unwrap(), "the lease is held");
        let path = d.path().to_path_buf();
        drop(d);
        assert!(!path.exists() && !lease.exists());
    }
}
