//! A run that replaces `irs run`: when the session runs its program once and that run is
//! verified, nothing is left for `irs run` to do once the program has started, so it `exec`s
//! the program instead of starting it beside itself and waiting for it. The program keeps
//! `irs run`'s process id; its exit status (a signal included) is its own, exactly as for the
//! plain build; Ctrl-C reaches it alone; no second process is started, waited for and torn
//! down.
//!
//! What `irs run` did after such a run, and where it is now:
//! - a run that leaves the verified trace, or reads input its verification did not, is
//!   reported by the runtime itself on standard error (`irs-runtime: this run ...`), as it
//!   always was; `irs run` only repeated it;
//! - the line `irs run 1/1: ...` (the prefix in force, the verifier's progress) is printed
//!   before the program starts: the exit status and duration it gave are the program's own
//!   now, for whoever started `irs run`.
//!
//! A run that is not verified (no prefix yet, `--divergence` reacting), several runs
//! (`--repeat`), or a standard input that must be fed while the program runs (a pipe or socket
//! whose captured bytes exceed its buffer) are run beside `irs run` (`Session::run`), which
//! reports each.

use super::input::StdinOrigin;
use super::session::{spawn_err, Session, Stdin};
use super::{InForce, ServiceError, VerifierState};
use std::io::Write;
use std::ffi::OsString;
use std::os::fd::{FromRawFd, OwnedFd};
use std::os::unix::process::CommandExt;
use std::path::PathBuf;
use std::process::Command;

/// The session's one run, ready to replace this process.
pub struct InPlace {
    /// The program and its arguments, standard input set.
    cmd: Command,
    /// What its environment changes from this process's (applied to this process as it is
    /// replaced: the `exec` then passes the environment as it is, not a copy built from it).
    env: Vec<(OsString, Option<OsString>)>,
    exe: PathBuf,
    /// The prefix in force as the run starts.
    pub prefix: InForce,
    /// What the input's verifier said of itself when the session attached.
    pub verifier: Option<VerifierState>,
}

impl InPlace {
    /// Replace this process with the program; returns only if that fails.
    pub fn exec(mut self) -> ServiceError {
        for (k, v) in &self.env {
            // This process has one thread (the front and the service run none beside the
            // caller by the time a run replaces them), so nothing reads the environment while
            // it changes.
            match v {
                Some(v) => std::env::set_var(k, v),
                None => std::env::remove_var(k),
            }
        }
        let e = self.cmd.exec();
        spawn_err(&self.exe, e)
    }
}

impl Session {
    /// The session's run, to `exec` in place of `irs run`, when it is verified and needs
    /// nothing of `irs run` once started (see the module's documentation); `None`: run it
    /// beside `irs run` ([`Session::run`]). The run is verified by the prefix found when the
    /// session attached, over the captures of the files its verification read that the
    /// attachment compared with the disk a moment ago (the runtime compares each file again
    /// as the program opens it).
    pub fn in_place(&self) -> Result<Option<InPlace>, ServiceError> {
        let (Some(store), Some(prefix)) = (&self.input, &self.forced) else { return Ok(None) };
        let mut cmd = self.program_command();
        let mut env = self.base_env();
        env.extend(self.enforce_env(store));
        match &self.stdin {
            // Already /dev/null (or closed, then opened on /dev/null as this process started):
            // the program gets the same.
            Stdin::Captured(_, StdinOrigin::Null) => {}
            Stdin::Captured(bytes, StdinOrigin::Pipe) => match filled_pipe(bytes).map_err(|e| spawn_err(&self.exe, e))? {
                Some(read_end) => {
                    cmd.stdin(read_end);
                }
                None => return Ok(None),
            },
            Stdin::Captured(bytes, StdinOrigin::Socket) => match filled_socket(bytes).map_err(|e| spawn_err(&self.exe, e))? {
                Some(theirs) => {
                    cmd.stdin(theirs);
                }
                None => return Ok(None),
            },
            Stdin::Captured(bytes, origin) => super::session::serve_copy(&mut cmd, bytes, origin)?,
            Stdin::Terminal => {}
            // What was read ahead, then the rest as it comes: a relay runs beside the program.
            Stdin::Relay(_) => return Ok(None),
        }
        Ok(Some(InPlace { cmd, env, exe: self.exe.clone(), prefix: prefix.clone(), verifier: self.verifier.clone() }))
    }
}

/// The read end of a pipe that holds `bytes` and is closed behind them (the program reads them,
/// then the end of the stream); `None` when they do not fit in a pipe's buffer.
fn filled_pipe(bytes: &[u8]) -> std::io::Result<Option<OwnedFd>> {
    let mut fds = [0; 2];
    // SAFETY: pipe2 writes two new descriptors into `fds`, owned right below.
    if unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) } != 0 {
        return Err(std::io::Error::last_os_error());
    }
    // SAFETY: both descriptors were just created and are owned by nothing else.
    let (read_end, write_end) = unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) };
    if !bytes.is_empty() && !fill(write_end, bytes)? {
        return Ok(None);
    }
    Ok(Some(read_end))
}

/// One end of a socket pair whose other end has sent `bytes` and is closed; `None` when they do
/// not fit in its buffers.
fn filled_socket(bytes: &[u8]) -> std::io::Result<Option<OwnedFd>> {
    let (ours, theirs) = std::os::unix::net::UnixStream::pair()?;
    if !bytes.is_empty() && !fill(OwnedFd::from(ours), bytes)? {
        return Ok(None);
    }
    Ok(Some(OwnedFd::from(theirs)))
}

/// Write all of `bytes` to `to` without blocking (a pipe's buffer is grown to hold them if
/// the system allows), then close it; `false` when they do not all fit.
fn fill(to: OwnedFd, bytes: &[u8]) -> std::io::Result<bool> {
    use std::os::fd::AsRawFd;
    let fd = to.as_raw_fd();
    // SAFETY: fcntl on a descriptor we own: grow a pipe's buffer (fails harmlessly on a socket
    // or beyond the system's limit; the write below finds out what fits), then make writes
    // non-blocking (the program reads only once it runs, after this).
    unsafe {
        if bytes.len() > 65536 {
            libc::fcntl(fd, libc::F_SETPIPE_SZ, bytes.len() as libc::c_int);
        }
        let flags = libc::fcntl(fd, libc::F_GETFL);
        if flags < 0 || libc::fcntl(fd, libc::F_SETFL, flags | libc::O_NONBLOCK) != 0 {
            return Err(std::io::Error::last_os_error());
        }
    }
    match std::fs::File::from(to).write_all(bytes) {
        Ok(()) => Ok(true),
        Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => Ok(false),
        Err(e) => Err(e),
    }
}
