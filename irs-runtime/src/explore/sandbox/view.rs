//! The private view of the file system that explored executions run in (DESIGN §7): built
//! from the [`mount_plan`](super::mount_plan) under the sandbox directory `D` of the verifier's
//! scratch space, which the server covers with a `tmpfs` of its own (in its private mount
//! namespace, so the directory stays empty for everyone else):
//!
//! ```text
//! D/up     a fresh tmpfs per generation: the upper and work directories of every overlay
//! D/root   the view: overlays, binds and a fresh /proc, mounted as the plan says
//! ```
//!
//! A *generation* is one such view. Every change an execution makes lands in `D/up` and
//! creates an inode there (a copied-up file, a new one, a whiteout for a removal or rename), so
//! the number of free inodes of `D/up` tells, in one `fstatfs`, whether the generation is still
//! as built. A changed generation is thrown away (lazily unmounted) and a new one built before
//! the next execution runs.
//!
//! Building allocates nothing: every path and option string is made once, in the server, before
//! the persistent worker takes the memory image that each execution starts from.

use super::mount_plan::{Mirror, PlannedMount, PROC_READ_ONLY};
use std::ffi::{CStr, CString};

/// A failed step of a build: what, where, and the error number (formatted when reported).
#[derive(Clone, Copy, Debug)]
pub struct BuildError {
    pub what: &'static str,
    pub path_index: usize,
    pub errno: i32,
}

struct Op {
    target: CString,
    source: CString,
    mirror: Mirror,
    flags: libc::c_ulong,
    /// `lowerdir=...,upperdir=...,workdir=...` for an overlay.
    overlay_options: CString,
    upper: CString,
    work: CString,
}

/// Every path and option of a generation, made once.
pub struct View {
    dir: CString,
    up: CString,
    root: CString,
    up_options: CString,
    ops: Vec<Op>,
    /// For messages: the planned mounts' paths, by op index.
    paths: Vec<String>,
}

fn c(s: &str) -> CString {
    CString::new(s.replace('\0', "")).expect("no NUL left")
}

/// Overlayfs splits its options at ',' and lower layers at ':'; such paths cannot be overlaid.
fn overlay_safe(path: &str) -> bool {
    !path.contains([',', ':', '\\'])
}

impl View {
    pub fn new(dir: &str, plan: &[PlannedMount], in_user_namespace: bool) -> View {
        let up = format!("{dir}/up");
        let root = format!("{dir}/root");
        let mut ops = Vec::new();
        let mut paths = Vec::new();
        for (i, m) in plan.iter().enumerate() {
            let target = if m.path == "/" { root.clone() } else { format!("{root}{}", m.path) };
            let (upper, work) = (format!("{up}/u{i}"), format!("{up}/w{i}"));
            let mirror = m.mirror;
            let options = format!("lowerdir={},upperdir={upper},workdir={work}{}", m.path, if in_user_namespace { ",userxattr" } else { "" });
            ops.push(Op {
                target: c(&target),
                source: c(&m.path),
                mirror,
                flags: m.flags as libc::c_ulong,
                overlay_options: c(&options),
                upper: c(&upper),
                work: c(&work),
            });
            paths.push(m.path.clone());
        }
        View { dir: c(dir), up: c(&up), root: c(&root), up_options: c("mode=0700,size=25%"), ops, paths }
    }

    pub fn up(&self) -> &CStr {
        &self.up
    }

    pub fn root(&self) -> &CStr {
        &self.root
    }

    /// A writable mount whose path overlayfs cannot take as a lower layer (a ',', ':' or '\\'
    /// in it): no view can be built.
    pub fn unsupported_path(&self) -> Option<&str> {
        self.ops.iter().zip(&self.paths).find(|(o, p)| o.mirror == Mirror::Overlay && !overlay_safe(p)).map(|(_, p)| p.as_str())
    }

    pub fn describe(&self, e: BuildError) -> String {
        let path = self.paths.get(e.path_index).map(String::as_str).unwrap_or("the sandbox directory");
        let hint = if e.what == "overlaying" { " (overlayfs cannot sit on it here; as a user without privileges, it cannot sit on a file system with mounts below it, such as /)" } else { "" };
        format!("{} {path}: {}{hint}", e.what, std::io::Error::from_raw_os_error(e.errno))
    }

    /// Cover the sandbox directory with the tmpfs that holds every generation (once, in the
    /// server).
    pub fn prepare(&self) -> Result<(), BuildError> {
        // SAFETY: mounts and directories inside our private mount namespace, on paths we made.
        unsafe {
            check(libc::mount(c"irs-sandbox".as_ptr(), self.dir.as_ptr(), c"tmpfs".as_ptr(), libc::MS_NOSUID | libc::MS_NODEV, c"mode=0700,size=1m".as_ptr() as *const libc::c_void), "mounting a tmpfs on", usize::MAX)?;
            check(libc::mkdir(self.up.as_ptr(), 0o700), "making", usize::MAX)?;
            check(libc::mkdir(self.root.as_ptr(), 0o755), "making", usize::MAX)?;
        }
        Ok(())
    }

    /// Build a generation at `D/root` (the caller has thrown the last one away, and its root
    /// is the real one, so that the plan's paths name the real mounts).
    pub fn build(&self) -> Result<(), BuildError> {
        // SAFETY: mounts and directories inside our private mount namespace; every string is a
        // NUL-terminated path or option made by `new`.
        unsafe {
            check(libc::mount(c"irs-upper".as_ptr(), self.up.as_ptr(), c"tmpfs".as_ptr(), libc::MS_NOSUID | libc::MS_NODEV, self.up_options.as_ptr() as *const libc::c_void), "mounting the upper layers' tmpfs on", usize::MAX)?;
            for (i, op) in self.ops.iter().enumerate() {
                match op.mirror {
                    Mirror::Overlay => {
                        check(libc::mkdir(op.upper.as_ptr(), 0o755), "making an upper layer for", i)?;
                        check(libc::mkdir(op.work.as_ptr(), 0o700), "making a work directory for", i)?;
                        // No fallback: a read-only view of a writable file system would
                        // explore writes that fail where the program's succeed.
                        let r = libc::mount(c"irs-view".as_ptr(), op.target.as_ptr(), c"overlay".as_ptr(), 0, op.overlay_options.as_ptr() as *const libc::c_void);
                        check(r, "overlaying", i)?;
                    }
                    Mirror::ReadOnly => bind_read_only(&op.source, &op.target, op.flags, i)?,
                    Mirror::Bind => check(libc::mount(op.source.as_ptr(), op.target.as_ptr(), std::ptr::null(), libc::MS_BIND | libc::MS_REC, std::ptr::null()), "binding", i)?,
                    Mirror::Proc => {
                        let flags = libc::MS_NOSUID | libc::MS_NODEV | libc::MS_NOEXEC;
                        if libc::mount(c"proc".as_ptr(), op.target.as_ptr(), c"proc".as_ptr(), flags, std::ptr::null()) != 0 {
                            // A proc of our own may be refused (a container that masks parts
                            // of its own): the existing one, read-only.
                            bind_read_only(&op.source, &op.target, op.flags, i)?;
                        } else {
                            proc_knobs_read_only(&op.target);
                        }
                    }
                }
            }
        }
        Ok(())
    }

    /// Throw the current generation away: lazily, so that processes still inside it (a paused
    /// execution) keep what they have.
    pub fn tear_down(&self) {
        // SAFETY: unmounting our own mounts in our private mount namespace.
        unsafe {
            libc::umount2(self.root.as_ptr(), libc::MNT_DETACH);
            libc::umount2(self.up.as_ptr(), libc::MNT_DETACH);
        }
    }
}

fn errno() -> i32 {
    std::io::Error::last_os_error().raw_os_error().unwrap_or(0)
}

fn check(r: libc::c_int, what: &'static str, path_index: usize) -> Result<(), BuildError> {
    if r == 0 {
        Ok(())
    } else {
        Err(BuildError { what, path_index, errno: errno() })
    }
}

/// Bind `source` at `target` (with the mounts below it: in a user namespace a bind may not
/// uncover what they hide; those that matter are mirrored again on top by the plan) and make
/// the bind read-only, keeping the flags a bind may not drop.
///
/// # Safety
/// Both are NUL-terminated paths; the caller is in its private mount namespace.
unsafe fn bind_read_only(source: &CStr, target: &CStr, flags: libc::c_ulong, i: usize) -> Result<(), BuildError> {
    check(libc::mount(source.as_ptr(), target.as_ptr(), std::ptr::null(), libc::MS_BIND | libc::MS_REC, std::ptr::null()), "binding", i)?;
    let ro = libc::MS_REMOUNT | libc::MS_BIND | libc::MS_RDONLY | flags;
    check(libc::mount(std::ptr::null(), target.as_ptr(), std::ptr::null(), ro, std::ptr::null()), "making read-only", i)
}

/// Bind each writable kernel knob of a fresh proc at `proc` over itself, read-only. Allocates
/// nothing: the paths are built on the stack.
///
/// # Safety
/// `proc` is a NUL-terminated path of a proc mounted in our private mount namespace.
unsafe fn proc_knobs_read_only(proc: &CStr) {
    let base = proc.to_bytes();
    for knob in PROC_READ_ONLY {
        let mut path = [0u8; 4096];
        let n = base.len() + 1 + knob.len();
        if n >= path.len() {
            continue;
        }
        path[..base.len()].copy_from_slice(base);
        path[base.len()] = b'/';
        path[base.len() + 1..n].copy_from_slice(knob.as_bytes());
        let p = path.as_ptr() as *const libc::c_char;
        if libc::access(p, libc::F_OK) != 0 {
            continue;
        }
        if libc::mount(p, p, std::ptr::null(), libc::MS_BIND | libc::MS_REC, std::ptr::null()) == 0 {
            libc::mount(std::ptr::null(), p, std::ptr::null(), libc::MS_REMOUNT | libc::MS_BIND | libc::MS_RDONLY | libc::MS_NOSUID | libc::MS_NODEV | libc::MS_NOEXEC, std::ptr::null());
        }
    }
}
