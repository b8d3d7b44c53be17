//! The namespaces an explored program lives in (DESIGN §7, "an explored execution does no
//! harm"): its own mount, process-id, network, IPC and host-name namespaces (and a user
//! namespace when it does not run as root, which the others need then).
//!
//! - Mounts: the private view of the file system is mounted here, invisible to everyone else.
//! - Process ids: an execution sees only the server and the processes of its own namespace, so a
//!   signal cannot reach a process outside (the server is the namespace's `init`, which the
//!   kernel shields from the signals its namespace sends it without a handler).
//! - Network: a namespace with nothing but a loopback interface of its own (brought up, so a
//!   program that talks to itself over `127.0.0.1` still can).
//! - IPC: System V objects and POSIX message queues of its own.
//!
//! `unshare(CLONE_NEWPID)` moves only the children of the caller, so the process the executor
//! started stays outside as a *keeper*: it forks the server, which is process 1 inside, waits
//! for it and ends as it ends. When the keeper is killed, the server dies with it
//! (`PR_SET_PDEATHSIG`), and with the server the whole namespace.

use std::ffi::CStr;

/// Why the namespaces could not be made.
#[derive(Debug)]
pub struct NamespaceError(pub String);

fn errno_text() -> String {
    std::io::Error::last_os_error().to_string()
}

fn write_file(path: &CStr, text: &str) -> Result<(), NamespaceError> {
    // SAFETY: open, write and close of a /proc file of our own process.
    unsafe {
        let fd = libc::open(path.as_ptr(), libc::O_WRONLY | libc::O_CLOEXEC);
        if fd < 0 {
            return Err(NamespaceError(format!("{}: {}", path.to_string_lossy(), errno_text())));
        }
        let n = libc::write(fd, text.as_ptr() as *const libc::c_void, text.len());
        let err = errno_text();
        libc::close(fd);
        if n != text.len() as isize {
            return Err(NamespaceError(format!("{}: {err}", path.to_string_lossy())));
        }
    }
    Ok(())
}

/// Enter new namespaces. Returns in the server (process 1 of the new process-id namespace);
/// the calling process stays behind as its keeper and never returns. Must be called while only
/// one thread exists.
pub fn enter() -> Result<(), NamespaceError> {
    // SAFETY: reading our own ids.
    let (uid, gid) = unsafe { (libc::geteuid(), libc::getegid()) };
    let mut flags = libc::CLONE_NEWNS | libc::CLONE_NEWPID | libc::CLONE_NEWNET | libc::CLONE_NEWIPC | libc::CLONE_NEWUTS;
    if uid != 0 {
        flags |= libc::CLONE_NEWUSER;
    }

    // SAFETY: one thread runs; unshare changes only this process's namespaces.
    if unsafe { libc::unshare(flags) } != 0 {
        return Err(NamespaceError(format!("unshare: {}", errno_text())));
    }
    if uid != 0 {
        // Root inside, this user outside: enough to mount the view, nothing more.
        write_file(c"/proc/self/setgroups", "deny")?;
        write_file(c"/proc/self/uid_map", &format!("0 {uid} 1"))?;
        write_file(c"/proc/self/gid_map", &format!("0 {gid} 1"))?;
    }
    // SAFETY: one thread runs here, so fork is safe.
    let pid = unsafe { libc::fork() };
    if pid < 0 {
        return Err(NamespaceError(format!("fork: {}", errno_text())));
    }
    if pid > 0 {
        keep(pid);
    }
    // SAFETY: process-wide settings of the new server: die with the keeper; a process group of
    // its own, so that a program's `kill(0, ...)` reaches no process of the executor's group.
    // (Not a session of its own: with the kernel's autogroups, a new session is a new
    // scheduling group, and the verifier and its program, which hand the processor back and
    // forth, then compete as strangers on a busy machine: five times slower here.)
    unsafe {
        libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL);
        libc::setpgid(0, 0);
    }
    loopback_up();
    Ok(())
}

/// The keeper: close what the server uses, wait for the server and end as it ended.
pub(super) fn keep(pid: libc::pid_t) -> ! {
    // SAFETY: our own descriptors (the server holds its copies) and our own child; then leave
    // as it left, re-raising its signal with the default action.
    unsafe {
        libc::syscall(libc::SYS_close_range, 3u32, u32::MAX, 0u32);
        let mut status = 0;
        loop {
            let r = libc::waitpid(pid, &mut status, 0);
            if r == pid || *libc::__errno_location() != libc::EINTR {
                break;
            }
        }
        if libc::WIFSIGNALED(status) {
            let sig = libc::WTERMSIG(status);
            libc::signal(sig, libc::SIG_DFL);
            libc::raise(sig);
        }
        libc::_exit(libc::WEXITSTATUS(status))
    }
}

/// Bring the namespace's loopback interface up (it starts down). A failure leaves it down: a
/// program that talks to itself then sees what it would on a machine without one.
fn loopback_up() {
    // SAFETY: a socket to ask the kernel, and the `ifreq` of "lo" it reads and writes.
    unsafe {
        let fd = libc::socket(libc::AF_INET, libc::SOCK_DGRAM | libc::SOCK_CLOEXEC, 0);
        if fd < 0 {
            return;
        }
        let mut req: libc::ifreq = std::mem::zeroed();
        for (i, b) in b"lo\0".iter().enumerate() {
            req.ifr_name[i] = *b as libc::c_char;
        }
        if libc::ioctl(fd, libc::SIOCGIFFLAGS as _, &mut req) == 0 {
            req.ifr_ifru.ifru_flags |= (libc::IFF_UP | libc::IFF_RUNNING) as libc::c_short;
            libc::ioctl(fd, libc::SIOCSIFFLAGS as _, &req);
        }
        libc::close(fd);
    }
}
