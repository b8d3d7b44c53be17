//! A persistent worker's image of its own process (DESIGN §7: executions without a
//! fork each). Taken once, before the first execution a worker runs: a copy of every private
//! writable mapping (the program's and the libraries' data and bss, the heap, the main thread's
//! TLS, the allocator's state), of the ranges the caller adds (the live parts of the fiber
//! stacks of an execution paused at a snapshot), the program break, the set of open
//! descriptors and their offsets. Restored after every execution, it puts the process back
//! exactly as it was, so the next execution starts from the same memory, at the same
//! addresses, as if it had been forked from the same process.
//!
//! Taking it allocates nothing on the heap: its bookkeeping lives in mappings of its own. The
//! image of a paused execution is taken inside that execution's process, and a continuation run
//! from it must see the heap exactly as the same schedule run from `main` would.
//!
//! The initial process stack is restored only above the address the caller names (`argv`): the
//! `argv` and `envp` arrays, the auxiliary vector and the strings they point to, which a program
//! may change (`argv[n] = NULL`, `unsetenv` on the environment it started with); below lies the
//! stack of the code that restores.
//!
//! What is not restored: the rest of the initial stack (no execution runs on it: every
//! logical thread is a fiber on its own stack), shared mappings (the explore buffer), the ranges
//! the caller excludes (the server's request and response buffers, rewritten before each use;
//! the fiber stacks, of which only the live parts matter), mappings made after the image, and
//! kernel state other than the break and descriptors (signal handlers, timers, the working
//! directory).

use std::ffi::{c_void, CStr};

/// A range of memory and where its copy is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Range {
    start: usize,
    len: usize,
    copy_at: usize,
}

/// Capacities of the bookkeeping (a process with more mappings or descriptors than this is run
/// one process per execution instead).
const MAX_RANGES: usize = 4096;
const MAX_FDS: usize = 1024;
/// Room for the text of `/proc/self/maps` (reserved, not committed).
const MAPS_BYTES: usize = 8 << 20;
/// Where the descriptors' offsets are in the bookkeeping mapping: after the ranges, the
/// descriptors and the maps text.
const OFFSETS_AT: usize = MAX_RANGES * std::mem::size_of::<Range>() + MAX_FDS * 4 + MAPS_BYTES;

pub struct ProcessImage {
    /// One mapping: the ranges, then the descriptors, then room for the maps text.
    meta: *mut u8,
    meta_len: usize,
    n_ranges: usize,
    n_fds: usize,
    copy: *mut u8,
    copy_len: usize,
    brk: usize,
}

fn map(len: usize) -> Result<*mut u8, String> {
    // SAFETY: a fresh private anonymous mapping; no existing memory is touched.
    let p = unsafe {
        libc::mmap(std::ptr::null_mut(), len, libc::PROT_READ | libc::PROT_WRITE, libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_NORESERVE, -1, 0)
    };
    if p == libc::MAP_FAILED {
        Err(format!("cannot map {len} bytes for the process image"))
    } else {
        Ok(p as *mut u8)
    }
}

/// Read a whole file into `buf`; its length, or `None` if it does not fit or cannot be read.
fn read_file(path: &CStr, buf: &mut [u8]) -> Option<usize> {
    // SAFETY: opening, reading into our buffer within its bounds, and closing our descriptor.
    unsafe {
        let fd = libc::open(path.as_ptr(), libc::O_RDONLY | libc::O_CLOEXEC);
        if fd < 0 {
            return None;
        }
        let mut n = 0;
        loop {
            let r = libc::read(fd, buf[n..].as_mut_ptr() as *mut c_void, buf.len() - n);
            if r <= 0 {
                libc::close(fd);
                return (r == 0 && n < buf.len()).then_some(n);
            }
            n += r as usize;
            if n == buf.len() {
                libc::close(fd);
                return None;
            }
        }
    }
}

fn hex(s: &[u8]) -> Option<usize> {
    let mut v: usize = 0;
    for &c in s {
        let d = (c as char).to_digit(16)? as usize;
        v = v.checked_mul(16)?.checked_add(d)?;
    }
    (!s.is_empty()).then_some(v)
}

/// Call `f(start, end)` for every private writable mapping other than the stack, as
/// `/proc/self/maps` lists them.
fn for_each_writable_private(maps: &[u8], mut f: impl FnMut(usize, usize)) {
    for line in maps.split(|&c| c == b'\n') {
        let mut fields = line.split(|&c| c == b' ').filter(|x| !x.is_empty());
        let (Some(range), Some(perms)) = (fields.next(), fields.next()) else { continue };
        let path = fields.nth(3).unwrap_or(b"");
        if perms != b"rw-p" || path == b"[stack]" {
            continue;
        }
        let Some(dash) = range.iter().position(|&c| c == b'-') else { continue };
        if let (Some(a), Some(b)) = (hex(&range[..dash]), hex(&range[dash + 1..])) {
            f(a, b);
        }
    }
}

/// The end of the `[stack]` mapping if `addr` lies in it, as `/proc/self/maps` lists it.
fn stack_end_above(maps: &[u8], addr: usize) -> Option<usize> {
    for line in maps.split(|&c| c == b'\n') {
        let mut fields = line.split(|&c| c == b' ').filter(|x| !x.is_empty());
        let Some(range) = fields.next() else { continue };
        if fields.nth(4) != Some(b"[stack]") {
            continue;
        }
        let dash = range.iter().position(|&c| c == b'-')?;
        let (a, b) = (hex(&range[..dash])?, hex(&range[dash + 1..])?);
        return (a <= addr && addr < b).then_some(b);
    }
    None
}

/// Call `f(start, end)` for the parts of `[a, b)` outside every `(start, end)` of `exclude`.
fn for_each_outside(mut a: usize, b: usize, exclude: &[(usize, usize)], f: &mut impl FnMut(usize, usize)) {
    while a < b {
        // The first exclusion that overlaps what is left.
        let next = exclude.iter().filter(|&&(xa, xb)| xa < b && xb > a).min_by_key(|&&(xa, _)| xa);
        match next {
            None => {
                f(a, b);
                return;
            }
            Some(&(xa, xb)) => {
                if xa > a {
                    f(a, xa);
                }
                a = xb;
            }
        }
    }
}

/// The open descriptors, sorted, into `out`; how many.
fn open_fds(out: &mut [i32]) -> Result<usize, String> {
    let mut n = 0;
    // SAFETY: listing /proc/self/fd with getdents64 into a local buffer and closing it again.
    unsafe {
        let dir = libc::open(c"/proc/self/fd".as_ptr(), libc::O_RDONLY | libc::O_DIRECTORY | libc::O_CLOEXEC);
        if dir < 0 {
            return Err("cannot list /proc/self/fd".into());
        }
        let mut buf = [0u8; 4096];
        loop {
            let got = libc::syscall(libc::SYS_getdents64, dir, buf.as_mut_ptr(), buf.len());
            if got <= 0 {
                break;
            }
            let mut at = 0usize;
            while at < got as usize {
                // struct linux_dirent64: u64 ino, i64 off, u16 reclen, u8 type, name...
                let reclen = u16::from_ne_bytes([buf[at + 16], buf[at + 17]]) as usize;
                let name = &buf[at + 19..at + reclen];
                let name = &name[..name.iter().position(|&c| c == 0).unwrap_or(name.len())];
                if let Some(fd) = std::str::from_utf8(name).ok().and_then(|s| s.parse::<i32>().ok()) {
                    if fd != dir {
                        if n == out.len() {
                            libc::close(dir);
                            return Err(format!("more than {} open descriptors", out.len()));
                        }
                        out[n] = fd;
                        n += 1;
                    }
                }
                at += reclen;
            }
        }
        libc::close(dir);
    }
    out[..n].sort_unstable();
    Ok(n)
}

fn current_brk() -> usize {
    // SAFETY: brk(0) only asks for the current break.
    unsafe { libc::syscall(libc::SYS_brk, 0usize) as usize }
}

impl ProcessImage {
    /// Take the image. `exclude`: `(start, length)` ranges not to restore; `include`: `(start,
    /// length)` ranges to restore although they are not private writable mappings of their own
    /// or are excluded (the live parts of fiber stacks); `stack_from`: the initial stack is
    /// restored from this address to its end (the address of `argv`'s array, see the module
    /// documentation), which must lie above every frame of the code that restores.
    pub fn capture(exclude: &[(usize, usize)], include: &[(usize, usize)], stack_from: Option<usize>) -> Result<ProcessImage, String> {
        let meta_len = OFFSETS_AT + MAX_FDS * 8;
        let meta = map(meta_len)?;
        let mut image = ProcessImage { meta, meta_len, n_ranges: 0, n_fds: 0, copy: std::ptr::null_mut(), copy_len: 0, brk: current_brk() };
        // SAFETY: the three parts of our own mapping, disjoint and in bounds.
        let (ranges, fds, text) = unsafe {
            (
                std::slice::from_raw_parts_mut(meta as *mut Range, MAX_RANGES),
                std::slice::from_raw_parts_mut(meta.add(MAX_RANGES * std::mem::size_of::<Range>()) as *mut i32, MAX_FDS),
                std::slice::from_raw_parts_mut(meta.add(MAX_RANGES * std::mem::size_of::<Range>() + MAX_FDS * 4), MAPS_BYTES),
            )
        };
        let maps_len = read_file(c"/proc/self/maps", text).ok_or("cannot read /proc/self/maps")?;
        // Our own bookkeeping is not part of the process's state.
        let mut excluded = [(0usize, 0usize); 64];
        if exclude.len() + 1 > excluded.len() {
            return Err("too many excluded ranges".into());
        }
        for (slot, &(s, l)) in excluded.iter_mut().zip(exclude) {
            *slot = (s, s + l);
        }
        excluded[exclude.len()] = (meta as usize, meta as usize + meta_len);
        let excluded = &excluded[..exclude.len() + 1];
        let mut total = 0usize;
        let mut overflow = false;
        let mut add = |a: usize, b: usize| {
            if image.n_ranges == MAX_RANGES {
                overflow = true;
                return;
            }
            ranges[image.n_ranges] = Range { start: a, len: b - a, copy_at: total };
            image.n_ranges += 1;
            total += b - a;
        };
        for_each_writable_private(&text[..maps_len], |a, b| for_each_outside(a, b, excluded, &mut add));
        for &(s, l) in include {
            if l > 0 {
                add(s, s + l);
            }
        }
        if let Some(from) = stack_from {
            let end = stack_end_above(&text[..maps_len], from).ok_or("the arguments are not on the initial stack")?;
            add(from, end);
        }
        if overflow {
            return Err(format!("more than {MAX_RANGES} memory ranges"));
        }
        image.n_fds = open_fds(fds)?;
        // SAFETY: the offsets part of our own mapping, disjoint from the others, in bounds.
        let offsets = unsafe { std::slice::from_raw_parts_mut(meta.add(OFFSETS_AT) as *mut i64, MAX_FDS) };
        for (o, &fd) in offsets.iter_mut().zip(&fds[..image.n_fds]) {
            // SAFETY: asking for the offset of one of our descriptors (-1 for pipes, sockets).
            *o = unsafe { libc::lseek(fd, 0, libc::SEEK_CUR) };
        }
        image.copy_len = total.max(1);
        image.copy = map(image.copy_len)?;
        for r in image.ranges() {
            // SAFETY: `r` is readable memory of this process (a mapping from /proc/self/maps, or
            // a range the caller vouches for), and the copy has room for it at `copy_at`.
            unsafe { std::ptr::copy_nonoverlapping(r.start as *const u8, image.copy.add(r.copy_at), r.len) };
        }
        Ok(image)
    }

    /// Bytes copied back by each restore, and in how many ranges.
    pub fn size(&self) -> (usize, usize) {
        (self.ranges().iter().map(|r| r.len).sum(), self.n_ranges)
    }

    fn ranges(&self) -> &[Range] {
        // SAFETY: the first `n_ranges` entries of our bookkeeping mapping, written by `capture`.
        unsafe { std::slice::from_raw_parts(self.meta as *const Range, self.n_ranges) }
    }

    fn offsets(&self) -> &[i64] {
        // SAFETY: the first `n_fds` offsets of our bookkeeping mapping, written by `capture`.
        unsafe { std::slice::from_raw_parts(self.meta.add(OFFSETS_AT) as *const i64, self.n_fds) }
    }

    fn fds(&self) -> &[i32] {
        // SAFETY: the first `n_fds` descriptors of our bookkeeping mapping, written by `capture`.
        unsafe { std::slice::from_raw_parts(self.meta.add(MAX_RANGES * std::mem::size_of::<Range>()) as *const i32, self.n_fds) }
    }

    /// Put the process back as it was at `capture`.
    ///
    /// # Safety
    /// No code may be running on, or hold references into, the restored memory other than the
    /// caller, whose stack is not restored; the caller must not rely on anything it wrote to
    /// restored memory since the capture.
    pub unsafe fn restore(&self) {
        // Descriptors the execution opened: closed, a range between open ones at a time.
        let mut from = 0i32;
        for &fd in self.fds().iter().chain(std::iter::once(&i32::MAX)) {
            if fd > from {
                // SAFETY: closing descriptors that were not open at the image.
                unsafe { libc::syscall(libc::SYS_close_range, from as u32, (fd - 1) as u32, 0u32) };
            }
            from = fd.saturating_add(1);
        }
        // Descriptors open at the image read and write from where they stood (a file a
        // constructor opened before `main`, read by every execution).
        for (&fd, &offset) in self.fds().iter().zip(self.offsets()) {
            if offset >= 0 {
                // SAFETY: repositioning a descriptor of ours that was open at the image.
                unsafe { libc::lseek(fd, offset, libc::SEEK_SET) };
            }
        }
        // The break first (so that the heap range exists again if the program shrank it), then
        // the memory.
        // SAFETY: the break as it was at the image; the allocator's own record of it is in the
        // memory restored below.
        unsafe { libc::syscall(libc::SYS_brk, self.brk) };
        for r in self.ranges() {
            // SAFETY: per the contract: the range is ours and mapped as at the capture, nobody
            // else uses it now, and the copy holds its bytes at `copy_at`.
            unsafe { std::ptr::copy_nonoverlapping(self.copy.add(r.copy_at) as *const u8, r.start as *mut u8, r.len) };
        }
    }
}

/// Seekable descriptors kept by [`DescriptorOffsets`] at most.
const MAX_KEPT_OFFSETS: usize = 16;

/// The offsets of the seekable descriptors open when taken, to set back before each process
/// forked later: a process per execution has no image, and shares its parent's open files (a
/// file a constructor opened before `main`), whose offsets each execution moves. No heap.
#[derive(Clone, Copy)]
pub struct DescriptorOffsets {
    n: usize,
    fds: [i32; MAX_KEPT_OFFSETS],
    offsets: [i64; MAX_KEPT_OFFSETS],
}

impl DescriptorOffsets {
    pub const NONE: DescriptorOffsets = DescriptorOffsets { n: 0, fds: [0; MAX_KEPT_OFFSETS], offsets: [0; MAX_KEPT_OFFSETS] };

    /// The offsets of the descriptors open now (the first [`MAX_KEPT_OFFSETS`] seekable ones).
    pub fn take() -> DescriptorOffsets {
        let mut all = [0i32; MAX_FDS];
        let mut kept = DescriptorOffsets::NONE;
        let n = open_fds(&mut all).unwrap_or(0);
        for &fd in &all[..n] {
            // SAFETY: asking for the offset of one of our descriptors (-1 for pipes, sockets).
            let offset = unsafe { libc::lseek(fd, 0, libc::SEEK_CUR) };
            if offset >= 0 && kept.n < MAX_KEPT_OFFSETS {
                (kept.fds[kept.n], kept.offsets[kept.n]) = (fd, offset);
                kept.n += 1;
            }
        }
        kept
    }

    /// Set every kept descriptor back to its offset.
    pub fn apply(&self) {
        for i in 0..self.n {
            // SAFETY: repositioning a descriptor of ours (if it is still open).
            unsafe { libc::lseek(self.fds[i], self.offsets[i], libc::SEEK_SET) };
        }
    }
}

impl ProcessImage {
    /// Unmap the image's own memory, in a process that will never restore it (a child forked
    /// from a worker, which an image taken later in it must not include).
    ///
    /// # Safety
    /// Nothing may use the image afterwards, nor drop it (which would unmap whatever was mapped
    /// there since): the process must end without returning to its owner.
    pub unsafe fn unmap(&self) {
        // SAFETY: our two mappings; per the contract nobody reads them again.
        unsafe {
            libc::munmap(self.copy as *mut c_void, self.copy_len);
            libc::munmap(self.meta as *mut c_void, self.meta_len);
        }
    }
}

impl Drop for ProcessImage {
    fn drop(&mut self) {
        // SAFETY: unmapping the two mappings we made, which nothing uses any more.
        unsafe { self.unmap() };
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_private_writable_mappings_and_subtracts() {
        let maps = b"\
55865cade000-55865cadf000 rw-p 00142000 fe:00 10018819                   /tmp/q/prog
55865cadf000-55865cb8f000 rw-p 00000000 00:00 0 
55866b32d000-55866b34e000 rw-p 00000000 00:00 0                          [heap]
7fb110606000-7fb111887000 rw-s 00000000 00:01 2203                       /memfd:irs-explore-buffer (deleted)
7fb111889000-7fb1118af000 r--p 00000000 fe:00 326279                     /usr/lib/x86_64-linux-gnu/libc.so.6
7ffc72e98000-7ffc72eb9000 rw-p 00000000 00:00 0                          [stack]
";
        let mut r = Vec::new();
        for_each_writable_private(maps, |a, b| r.push((a, b)));
        assert_eq!(stack_end_above(maps, 0x7ffc72eb8000), Some(0x7ffc72eb9000));
        assert_eq!(stack_end_above(maps, 0x7ffc72e97000), None);
        assert_eq!(r, vec![(0x55865cade000, 0x55865cadf000), (0x55865cadf000, 0x55865cb8f000), (0x55866b32d000, 0x55866b34e000)]);
        let exclude = [(0x55865cae0000, 0x55865cae1000), (0x55866b32d000, 0x55866b34e000), (0x55865cb00000, 0x55865cb01000)];
        let mut s = Vec::new();
        for &(a, b) in &r {
            for_each_outside(a, b, &exclude, &mut |x, y| s.push((x, y)));
        }
        assert_eq!(
            s,
            vec![(0x55865cade000, 0x55865cadf000), (0x55865cadf000, 0x55865cae0000), (0x55865cae1000, 0x55865cb00000), (0x55865cb01000, 0x55865cb8f000)]
        );
    }
}
