//! The sandbox of explored executions (DESIGN §7, "an explored execution does no harm"). The
//! verifier runs a program thousands of times next to the user's own runs; none of those
//! executions may change anything outside the verifier's scratch space. The operating system
//! isolates them, not a list of intercepted calls:
//!
//! - [`namespaces`]: the server lives in mount, process-id, network, IPC and host-name
//!   namespaces of its own;
//! - [`view`]: every execution runs chrooted in a private view of the whole file system built
//!   from overlays (reads see the real files; writes, creations, renames, unlinks and directory
//!   changes land in an upper layer), from the [`mount_plan`];
//! - before each execution ([`before_execution`]) the view is checked and, if the last
//!   execution changed it, replaced by a fresh one; the working directory is set back to where
//!   the program started.
//!
//! What an execution can still observe or affect is in `docs/src/sandbox.md`. Only EXPLORE uses
//! this module; it is set up when the executor names a sandbox directory
//! ([`shared_proto::explore_protocol::ENV_SANDBOX_DIR`]).
//!
//! It must never let an execution run outside a view it has not checked: any failure to build
//! or enter one ends the server with the reason, and no execution runs.

mod mount_plan;
mod namespaces;
mod view;

use std::ffi::CString;
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};
use std::sync::OnceLock;
use view::View;

/// State every process of the server shares (a shared anonymous page mapped before the first
/// fork). Only one process runs an execution or rebuilds at a time (the server waits for its
/// worker or child, a paused execution for its continuation), and a process reads the page only
/// after the one before it has ended or handed over through the executor's pipes; so relaxed
/// accesses suffice.
#[repr(C)]
struct Shared {
    generation: AtomicU64,
    root_dev: AtomicU64,
    root_ino: AtomicU64,
    /// Free inodes of the current generation's upper tmpfs as built.
    baseline_free: AtomicU64,
    /// A process could not build or enter a view: the server must stop.
    failed: AtomicU32,
}

struct Sandbox {
    view: View,
    /// The real root, to leave a view by (`fchdir` + `chroot(".")`).
    real_root: libc::c_int,
    /// The descriptor number at which every process keeps its generation's `D/up`.
    up_fd: libc::c_int,
    cwd: CString,
    shared: *const Shared,
}

// SAFETY: set once in the single-threaded server before any fork and read-only afterwards; the
// shared page is accessed through atomics.
unsafe impl Send for Sandbox {}
// SAFETY: as above.
unsafe impl Sync for Sandbox {}

static SANDBOX: OnceLock<Sandbox> = OnceLock::new();


fn fail(msg: &str) -> ! {
    eprintln!("irs-runtime: cannot isolate explored executions: {msg}");
    std::process::exit(2)
}

/// In the server, before anything else (one thread): if the executor named a sandbox
/// directory, enter new namespaces (this process stays outside as the server's keeper and never
/// returns from here) and build the first view. Without one, executions are not isolated.
pub fn enter() {
    enter_with(None)
}

/// A run with real threads that the verifier makes (RECORD, to learn the program's own order of
/// events, `irs_verifier::natural_run`; ENFORCE, to time a candidate anchor,
/// `irs_verifier::anchor_trial`), isolated as an explored execution is: if the verifier named a
/// sandbox directory, enter new namespaces and a view in which `keep_dir` (where the trace is
/// written, or the prefix read) is the real directory, then run in a child (the namespace's
/// first process only waits for it: the program is never its process-id namespace's init,
/// whose signals the kernel treats apart). Before anything else, with one thread.
pub fn enter_for_run(keep_dir: &str) {
    if std::env::var_os(shared_proto::explore_protocol::ENV_SANDBOX_DIR).is_none() {
        return;
    }
    enter_with(Some(keep_dir));
    // SAFETY: one thread; the parent only waits and leaves with the child's status.
    let pid = unsafe { libc::fork() };
    if pid < 0 {
        fail(&format!("fork: {}", std::io::Error::last_os_error()));
    }
    if pid > 0 {
        namespaces::keep(pid);
    }
    // SAFETY: ending with the parent, which never outlives the run on purpose.
    unsafe { libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL) };
    before_execution();
}

fn enter_with(keep_dir: Option<&str>) {
    let Some(dir) = std::env::var_os(shared_proto::explore_protocol::ENV_SANDBOX_DIR) else { return };
    let Some(dir) = dir.to_str().map(|d| d.trim_end_matches('/').to_string()).filter(|d| d.starts_with('/')) else {
        fail("the sandbox directory must be an absolute path in UTF-8")
    };
    // SAFETY: reading our own effective user id.
    let in_user_namespace = unsafe { libc::geteuid() } != 0;
    if let Some(captures) = std::env::var_os(shared_proto::input_files::ENV_DIR).filter(|d| !d.is_empty()) {
        if let Err(e) = shared_proto::input_files::FileCaptures::new(&captures).ensure_dir() {
            fail(&format!("the captures' directory {}: {e}", std::path::Path::new(&captures).display()));
        }
    }
    let cwd = std::env::current_dir().unwrap_or_else(|e| fail(&format!("the working directory: {e}")));
    let cwd = CString::new(cwd.into_os_string().into_encoded_bytes()).unwrap_or_else(|_| fail("the working directory's name"));
    if let Err(e) = namespaces::enter() {
        fail(&format!("{} (irs needs Linux namespaces; IRS_SANDBOX=off runs executions unisolated, really writing files)", e.0));
    }
    // SAFETY: making every mount of our new namespace private, so nothing we mount propagates
    // out (and nothing from outside in, which would change the view under an execution).
    if unsafe { libc::mount(std::ptr::null(), c"/".as_ptr(), std::ptr::null(), libc::MS_REC | libc::MS_PRIVATE, std::ptr::null()) } != 0 {
        fail(&format!("making the mounts private: {}", std::io::Error::last_os_error()));
    }
    let mountinfo = std::fs::read_to_string("/proc/self/mountinfo").unwrap_or_else(|e| fail(&format!("reading /proc/self/mountinfo: {e}")));
    let mut plan = mount_plan::plan(&mountinfo, &dir);
    // The verifier's own capture of the input's files is its scratch space: executions write
    // captures there for the verification, so it is seen as it is.
    if let Some(captures) = std::env::var_os(shared_proto::input_files::ENV_DIR).and_then(|d| d.into_string().ok()).filter(|d| d.starts_with('/')) {
        plan.push(mount_plan::PlannedMount { path: captures, fstype: String::new(), mirror: mount_plan::Mirror::Bind, flags: 0 });
    }
    if let Some(d) = keep_dir.filter(|d| d.starts_with('/')) {
        plan.push(mount_plan::PlannedMount { path: d.to_string(), fstype: String::new(), mirror: mount_plan::Mirror::Bind, flags: 0 });
    }
    let view = View::new(&dir, &plan, in_user_namespace);
    if let Some(path) = view.unsupported_path() {
        fail(&format!("overlayfs cannot take {path} as a lower layer (a ',', ':' or '\\' in its name)"));
    }
    if let Err(e) = view.prepare().and_then(|()| view.build()) {
        fail(&view.describe(e));
    }
    // SAFETY: a fresh shared anonymous page (zero-filled atomics are valid), and descriptors of
    // our own: the real root, and the first generation's upper tmpfs.
    let (shared, real_root, up_fd) = unsafe {
        let p = libc::mmap(std::ptr::null_mut(), 4096, libc::PROT_READ | libc::PROT_WRITE, libc::MAP_SHARED | libc::MAP_ANONYMOUS, -1, 0);
        if p == libc::MAP_FAILED {
            fail("mapping its shared page");
        }
        let real_root = libc::open(c"/".as_ptr(), libc::O_PATH | libc::O_DIRECTORY | libc::O_CLOEXEC);
        let up_fd = libc::open(view.up().as_ptr(), libc::O_PATH | libc::O_DIRECTORY | libc::O_CLOEXEC);
        if real_root < 0 || up_fd < 0 {
            fail(&format!("opening the roots: {}", std::io::Error::last_os_error()));
        }
        (p as *const Shared, real_root, up_fd)
    };
    let sb = Sandbox { view, real_root, up_fd, cwd, shared };
    if let Err(e) = sb.record_generation() {
        fail(&e);
    }
    if SANDBOX.set(sb).is_err() {
        fail("set up twice");
    }
}

impl Sandbox {
    fn shared(&self) -> &Shared {
        // SAFETY: mapped in `enter`, never unmapped.
        unsafe { &*self.shared }
    }

    /// After a build (this process at the real root): remember the generation's root and its
    /// upper tmpfs's free inodes, and keep that tmpfs at `up_fd`.
    fn record_generation(&self) -> Result<(), String> {
        // SAFETY: stat into a local.
        unsafe {
            let mut st: libc::stat = std::mem::zeroed();
            if libc::stat(self.view.root().as_ptr(), &mut st) != 0 {
                return Err(format!("the view's root: {}", std::io::Error::last_os_error()));
            }
            self.place_up_fd()?;
            let free = self.free_inodes().ok_or_else(|| format!("the upper layers' size: {}", std::io::Error::last_os_error()))?;
            let s = self.shared();
            s.root_dev.store(st.st_dev, Ordering::Relaxed);
            s.root_ino.store(st.st_ino, Ordering::Relaxed);
            s.baseline_free.store(free, Ordering::Relaxed);
            s.generation.fetch_add(1, Ordering::Relaxed);
        }
        Ok(())
    }

    /// Open the current generation's upper tmpfs (this process at the real root) and keep it
    /// at `up_fd`.
    fn place_up_fd(&self) -> Result<(), String> {
        // SAFETY: opening a NUL-terminated path; dup3 onto our fixed descriptor number.
        unsafe {
            let fd = libc::open(self.view.up().as_ptr(), libc::O_PATH | libc::O_DIRECTORY | libc::O_CLOEXEC);
            if fd < 0 {
                return Err(format!("the upper layers: {}", std::io::Error::last_os_error()));
            }
            if fd != self.up_fd {
                libc::dup3(fd, self.up_fd, libc::O_CLOEXEC);
                libc::close(fd);
            }
        }
        Ok(())
    }

    fn free_inodes(&self) -> Option<u64> {
        // SAFETY: fstatfs of our own descriptor into a local.
        unsafe {
            let mut fs: libc::statfs = std::mem::zeroed();
            (libc::fstatfs(self.up_fd, &mut fs) == 0).then_some(fs.f_ffree)
        }
    }

    /// Is this process's root the current generation's view?
    fn in_current(&self) -> bool {
        // SAFETY: stat of our root into a local.
        unsafe {
            let mut st: libc::stat = std::mem::zeroed();
            let s = self.shared();
            libc::stat(c"/".as_ptr(), &mut st) == 0 && st.st_dev == s.root_dev.load(Ordering::Relaxed) && st.st_ino == s.root_ino.load(Ordering::Relaxed)
        }
    }

    /// Has the generation this process is in been changed since it was built?
    fn changed(&self) -> bool {
        self.free_inodes() != Some(self.shared().baseline_free.load(Ordering::Relaxed))
    }

    /// Leave whatever view this process is in for the real root.
    fn leave_view(&self) -> Result<(), String> {
        // SAFETY: changing our own process's working directory and root.
        unsafe {
            if libc::fchdir(self.real_root) != 0 || libc::chroot(c".".as_ptr()) != 0 {
                return Err(format!("leaving the view: {}", std::io::Error::last_os_error()));
            }
        }
        Ok(())
    }

    /// From the real root, enter the current generation.
    fn enter_view(&self) -> Result<(), String> {
        self.place_up_fd()?;
        // SAFETY: changing our own process's root to a NUL-terminated path.
        unsafe {
            if libc::chroot(self.view.root().as_ptr()) != 0 {
                return Err(format!("entering the view: {}", std::io::Error::last_os_error()));
            }
        }
        Ok(())
    }

    fn prepare_execution(&self) -> Result<(), String> {
        if !self.in_current() {
            self.leave_view()?;
            self.enter_view()?;
        }
        if self.changed() {
            self.leave_view()?;
            self.view.tear_down();
            self.view.build().map_err(|e| self.view.describe(e))?;
            self.record_generation()?;
            self.enter_view()?;
        }
        // SAFETY: changing our own working directory to a NUL-terminated path.
        if unsafe { libc::chdir(self.cwd.as_ptr()) } != 0 {
            return Err(format!("the working directory {} in the view: {}", self.cwd.to_string_lossy(), std::io::Error::last_os_error()));
        }
        Ok(())
    }
}

/// Before an execution runs in this process (a worker, a process forked for it, a
/// continuation): make sure it starts in an unchanged view, at the program's working directory.
/// On failure the process ends (the server sees [`failed`] and stops); nothing runs unisolated.
pub fn before_execution() {
    let Some(sb) = SANDBOX.get() else { return };
    if let Err(e) = sb.prepare_execution() {
        sb.shared().failed.store(1, Ordering::Relaxed);
        eprintln!("irs-runtime: cannot isolate explored executions: {e}");
        // SAFETY: leaving the process without running anything of the program's.
        unsafe { libc::_exit(2) }
    }
}

/// May the running execution pause here for continuations to share? Not when it has changed
/// its view: continuations would see each other's changes.
pub fn allows_pause() -> bool {
    SANDBOX.get().is_none_or(|sb| !sb.changed())
}

/// Did a process of this server fail to isolate an execution? Then the server stops.
pub fn failed() -> bool {
    SANDBOX.get().is_some_and(|sb| sb.shared().failed.load(Ordering::Relaxed) != 0)
}
