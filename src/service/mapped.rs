//! A prefix segment mapped read-only, to be read in place: `irs run` reads the latest cutoff of
//! its input's segment at every start, and copying the whole segment (its cutoff log is mostly
//! empty slots) cost a run as much as the rest of what it reads. The runtime maps the same
//! segment the same way (`irs_runtime::enforce`): a live verifier only appends cutoffs to it and
//! raises its published count (a new segment replaces it by a rename, never by truncating it),
//! and everything read from it is validated first.

use std::os::fd::AsRawFd;
use std::path::Path;

/// A read-only shared mapping of a whole file, unmapped when dropped.
pub struct Mapped {
    ptr: *mut libc::c_void,
    len: usize,
}

impl Mapped {
    /// Map the file at `path`; `None` when it cannot be opened or mapped, or is empty.
    pub fn open(path: &Path) -> Option<Mapped> {
        let file = std::fs::File::open(path).ok()?;
        let len = usize::try_from(file.metadata().ok()?.len()).ok().filter(|&l| l > 0)?;
        // SAFETY: a new read-only shared mapping of `len` bytes of a file we hold open; the
        // mapping outlives the descriptor, and is unmapped only by `drop`.
        let ptr = unsafe { libc::mmap(std::ptr::null_mut(), len, libc::PROT_READ, libc::MAP_SHARED, file.as_raw_fd(), 0) };
        (ptr != libc::MAP_FAILED).then_some(Mapped { ptr, len })
    }

    pub fn bytes(&self) -> &[u8] {
        // SAFETY: `ptr` maps `len` readable bytes until `drop`; a writer of the segment only
        // appends within them (see the module's documentation).
        unsafe { std::slice::from_raw_parts(self.ptr as *const u8, self.len) }
    }
}

impl Drop for Mapped {
    fn drop(&mut self) {
        // SAFETY: the mapping made by `open`, unmapped once; no slice of it outlives `self`.
        unsafe { libc::munmap(self.ptr, self.len) };
    }
}
