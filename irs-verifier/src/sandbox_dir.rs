//! The verifier's scratch directory over which an explored program builds the private view of
//! the file system its executions run in (DESIGN §7, "an explored execution does no harm";
//! the runtime's `sandbox` module mounts over it in a mount namespace of its own, so outside
//! that namespace it stays an empty directory). Made when the executor starts the program,
//! removed when the executor is dropped.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

/// Whether the environment turned isolation off (`IRS_SANDBOX=off`).
pub fn disabled_by_environment() -> bool {
    std::env::var("IRS_SANDBOX").is_ok_and(|v| v == "off" || v == "0")
}

/// An empty directory of our own, removed on drop.
#[derive(Debug)]
pub struct SandboxDir {
    path: PathBuf,
}

impl SandboxDir {
    pub fn create() -> std::io::Result<SandboxDir> {
        // Relaxed: only makes names unique within this process.
        static NEXT: AtomicU64 = AtomicU64::new(0);
        let base = std::env::temp_dir();
        loop {
            let n = NEXT.fetch_add(1, Ordering::Relaxed);
            let path = base.join(format!("irs-sandbox-{}-{n}", std::process::id()));
            let mut b = std::fs::DirBuilder::new();
            std::os::unix::fs::DirBuilderExt::mode(&mut b, 0o700);
            match b.create(&path) {
                Ok(()) => return Ok(SandboxDir { path: std::path::absolute(&path).unwrap_or(path) }),
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
                Err(e) => return Err(e),
            }
        }
    }

    pub fn path(&self) -> &Path {
        &self.path
    }
}

impl Drop for SandboxDir {
    fn drop(&mut self) {
        // Empty outside the program's namespace; a program still running keeps its mounts in
        // its own namespace, not here.
        let _ = std::fs::remove_dir(&self.path);
    }
}
