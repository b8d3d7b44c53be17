//! The persistent worker's image of its own process (DESIGN §7, issue 3: executions without a
//! fork each). Taken once, before the first execution: a copy of every private writable mapping
//! (the program's and the libraries' data and bss, the heap, the main thread's TLS, the
//! allocator's state), the program break and the set of open descriptors. Restored after every
//! execution, it puts the process back exactly as it was, so the next execution starts from the
//! same memory, at the same addresses, as if it had been forked from the same server.
//!
//! What is not restored: the stack of the code that restores (no execution runs on it: every
//! logical thread is a fiber on its own stack), shared mappings (the explore buffer), the ranges
//! the caller excludes (the server's request and response buffers: rewritten before each use),
//! mappings made after the image (the fiber stacks: their contents do not matter), and kernel
//! state other than the break and descriptors (signal handlers, timers, the working directory):
//! a program that changes those is run one process per execution instead, see
//! `explore_server`.

use std::ffi::c_void;

/// A private writable range of memory and where its copy is.
#[derive(Clone, Copy, Debug)]
struct Range {
    start: usize,
    len: usize,
    copy_at: usize,
}

pub struct ProcessImage {
    ranges: Vec<Range>,
    copy: *mut u8,
    copy_len: usize,
    brk: usize,
    /// Descriptors open at the image, sorted.
    fds: Vec<i32>,
}

/// `/proc/self/maps` lines that are private writable mappings other than the stack: `(start,
/// end)`.
fn writable_private(maps: &str) -> Vec<(usize, usize)> {
    let mut out = Vec::new();
    for line in maps.lines() {
        let mut f = line.split_whitespace();
        let (Some(range), Some(perms)) = (f.next(), f.next()) else { continue };
        let path = f.nth(3).unwrap_or("");
        if perms != "rw-p" || path == "[stack]" {
            continue;
        }
        let Some((a, b)) = range.split_once('-') else { continue };
        if let (Ok(a), Ok(b)) = (usize::from_str_radix(a, 16), usize::from_str_radix(b, 16)) {
            out.push((a, b));
        }
    }
    out
}

/// `ranges` minus `exclude` (both as `(start, end)`).
fn subtract(ranges: &[(usize, usize)], exclude: &[(usize, usize)]) -> Vec<(usize, usize)> {
    let mut out: Vec<(usize, usize)> = ranges.to_vec();
    for &(xa, xb) in exclude {
        out = out
            .into_iter()
            .flat_map(|(a, b)| {
                if xb <= a || b <= xa {
                    vec![(a, b)]
                } else {
                    [(a, xa.max(a)), (xb.min(b), b)].into_iter().filter(|(s, e)| s < e).collect()
                }
            })
            .collect();
    }
    out
}

fn open_fds() -> Result<Vec<i32>, String> {
    let listed: Vec<i32> = std::fs::read_dir("/proc/self/fd")
        .map_err(|e| format!("cannot list /proc/self/fd: {e}"))?
        .filter_map(|e| e.ok()?.file_name().to_str()?.parse().ok())
        .collect();
    // The listing's own descriptor is among them, and closed by now.
    // SAFETY: F_GETFD only asks whether a descriptor is open.
    let mut fds: Vec<i32> = listed.into_iter().filter(|&fd| unsafe { libc::fcntl(fd, libc::F_GETFD) } >= 0).collect();
    fds.sort_unstable();
    Ok(fds)
}

fn current_brk() -> usize {
    // SAFETY: brk(0) only asks for the current break.
    unsafe { libc::syscall(libc::SYS_brk, 0usize) as usize }
}

impl ProcessImage {
    /// Take the image. `exclude`: `(start, length)` ranges not to restore.
    pub fn capture(exclude: &[(usize, usize)]) -> Result<ProcessImage, String> {
        let maps = std::fs::read_to_string("/proc/self/maps").map_err(|e| format!("cannot read /proc/self/maps: {e}"))?;
        // Everything the image itself allocates is allocated before its copy is taken, so that
        // restoring the heap restores this bookkeeping to itself.
        let fds = open_fds()?;
        let exclude: Vec<(usize, usize)> = exclude.iter().map(|&(s, l)| (s, s + l)).collect();
        let kept = subtract(&writable_private(&maps), &exclude);
        let mut ranges = Vec::with_capacity(kept.len());
        let mut total = 0usize;
        for (a, b) in kept {
            ranges.push(Range { start: a, len: b - a, copy_at: total });
            total += b - a;
        }
        let copy_len = total.max(1);
        // SAFETY: a fresh private anonymous mapping for the copy (made after the ranges were
        // read, so it is not one of them).
        let copy = unsafe {
            libc::mmap(std::ptr::null_mut(), copy_len, libc::PROT_READ | libc::PROT_WRITE, libc::MAP_PRIVATE | libc::MAP_ANONYMOUS, -1, 0)
        };
        if copy == libc::MAP_FAILED {
            return Err(format!("cannot map {copy_len} bytes for the process image"));
        }
        let image = ProcessImage { ranges, copy: copy as *mut u8, copy_len, brk: current_brk(), fds };
        for r in &image.ranges {
            // SAFETY: `r` is a readable mapping of this process (from /proc/self/maps, nothing
            // unmapped since), the copy has room for it at `copy_at`.
            unsafe { std::ptr::copy_nonoverlapping(r.start as *const u8, image.copy.add(r.copy_at), r.len) };
        }
        Ok(image)
    }

    /// Put the process back as it was at `capture`. `keep_fds`: descriptors to leave open even
    /// if they were not open then.
    ///
    /// # Safety
    /// No code may be running on, or hold references into, the restored memory other than the
    /// caller, whose stack is not restored; the caller must not rely on anything it wrote to
    /// restored memory since the capture.
    pub unsafe fn restore(&self) {
        // Descriptors the execution opened: closed, a range between open ones at a time.
        let mut from = 0i32;
        for &fd in self.fds.iter().chain(std::iter::once(&i32::MAX)) {
            if fd > from {
                // SAFETY: closing descriptors that were not open at the image.
                unsafe { libc::syscall(libc::SYS_close_range, from as u32, (fd - 1) as u32, 0u32) };
            }
            from = fd.saturating_add(1);
        }
        // The break first (so that the heap range exists again if the program shrank it), then
        // the memory.
        // SAFETY: the break as it was at the image; the allocator's own record of it is in the
        // memory restored below.
        unsafe { libc::syscall(libc::SYS_brk, self.brk) };
        for r in &self.ranges {
            // SAFETY: per the contract: the range is ours and mapped as at the capture, nobody
            // else uses it now, and the copy holds its bytes at `copy_at`. The ranges vector
            // itself lives in the heap, whose restore writes back the same bytes it holds.
            unsafe { std::ptr::copy_nonoverlapping(self.copy.add(r.copy_at) as *const u8, r.start as *mut u8, r.len) };
        }
    }
}

impl Drop for ProcessImage {
    fn drop(&mut self) {
        // SAFETY: unmapping the copy we mapped.
        unsafe { libc::munmap(self.copy as *mut c_void, self.copy_len) };
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_private_writable_mappings_and_subtracts() {
        let maps = "\
55865cade000-55865cadf000 rw-p 00142000 fe:00 10018819                   /tmp/q/prog
55865cadf000-55865cb8f000 rw-p 00000000 00:00 0 
55866b32d000-55866b34e000 rw-p 00000000 00:00 0                          [heap]
7fb110606000-7fb111887000 rw-s 00000000 00:01 2203                       /memfd:irs-explore-buffer (deleted)
7fb111889000-7fb1118af000 r--p 00000000 fe:00 326279                     /usr/lib/x86_64-linux-gnu/libc.so.6
7ffc72e98000-7ffc72eb9000 rw-p 00000000 00:00 0                          [stack]
";
        let r = writable_private(maps);
        assert_eq!(r, vec![(0x55865cade000, 0x55865cadf000), (0x55865cadf000, 0x55865cb8f000), (0x55866b32d000, 0x55866b34e000)]);
        let s = subtract(&r, &[(0x55865cae0000, 0x55865cae1000), (0x55866b32d000, 0x55866b34e000)]);
        assert_eq!(s, vec![(0x55865cade000, 0x55865cadf000), (0x55865cadf000, 0x55865cae0000), (0x55865cae1000, 0x55865cb8f000)]);
    }
}
