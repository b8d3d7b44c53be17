//! The background verifier of a program (DESIGN §1, §4 "Publishing" and "Inputs"): `irs worker`,
//! one per program at a time (it holds an exclusive `flock` on the program's `worker.lock` for its
//! life), takes the oldest queued input, verifies it with `irs verify --input KEY --publish` (the
//! input's arguments, environment and standard input; prefixes published to the input's segment as
//! they are proven safe), and goes on until the queue is empty.
//!
//! Nothing is lost between a worker that finds the queue empty and a run that queues an input
//! at that moment: the worker lets go of the lock and then looks at the queue once more, while a
//! run queues first and then starts a worker if it can take the lock; one of the two sees the
//! other.

use crate::service::anchor::Anchor;
use super::queue;
use super::state::{self, Status};
use super::store::ProgramStore;
use super::ServiceError;
use std::os::fd::AsRawFd;
use std::os::unix::process::CommandExt;
use std::path::Path;

/// The worker's lock, held while the file stays open.
pub struct WorkerLock(std::fs::File);

impl WorkerLock {
    /// Write this process's id into the lock file (for `irs forget`, which stops the worker).
    fn say_pid(&mut self) {
        use std::io::{Seek, Write};
        let _ = self.0.set_len(0);
        let _ = self.0.seek(std::io::SeekFrom::Start(0));
        let _ = write!(self.0, "{}", std::process::id());
    }
}

/// The process id of the worker that holds (or last held) the program's lock.
pub fn pid(program: &ProgramStore) -> Option<u32> {
    std::fs::read_to_string(program.worker_lock()).ok()?.trim().parse().ok()
}

/// Take the program's worker lock if nobody holds it.
pub fn try_lock(program: &ProgramStore) -> Result<Option<WorkerLock>, ServiceError> {
    program.create()?;
    let path = program.worker_lock();
    let f = std::fs::OpenOptions::new().create(true).truncate(false).write(true).open(&path).map_err(ServiceError::Spawn)?;
    // SAFETY: flock on a descriptor we own; the lock goes with the descriptor.
    if unsafe { libc::flock(f.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) } == 0 {
        Ok(Some(WorkerLock(f)))
    } else {
        Ok(None)
    }
}

/// Is a worker verifying this program's queue? (Asking creates nothing: a program never seen
/// has no lock file and no worker.)
pub fn running(program: &ProgramStore) -> bool {
    program.worker_lock().exists() && matches!(try_lock(program), Ok(None))
}

/// Start a worker for the program unless one runs: `irs worker -- EXE`, detached from this
/// process's session, its output in the program's `worker.log`; its verifiers anchor their
/// prefixes on `anchor` (`irs verify --anchor`). Returns the process id of the
/// worker it started, if it started one.
pub fn ensure(program: &ProgramStore, exe: &Path, anchor: Anchor) -> Result<Option<u32>, ServiceError> {
    match try_lock(program)? {
        None => return Ok(None),
        Some(lock) => drop(lock),
    }
    let irs = std::env::current_exe().map_err(ServiceError::Spawn)?;
    let log = std::fs::File::create(program.worker_log()).map_err(ServiceError::Spawn)?;
    let err = log.try_clone().map_err(ServiceError::Spawn)?;
    let mut cmd = std::process::Command::new(irs);
    cmd.args(["worker", "--anchor", anchor.name()]);
    cmd.arg("--").arg(exe).stdin(std::process::Stdio::null()).stdout(log).stderr(err);
    // SAFETY: setsid in the child before exec: the worker outlives this command and its
    // terminal's signals.
    unsafe {
        cmd.pre_exec(|| {
            libc::setsid();
            Ok(())
        });
    }
    Ok(Some(cmd.spawn().map_err(ServiceError::Spawn)?.id()))
}

/// `irs worker --anchor A -- EXE`: verify the program's queued inputs one after another; `each` hears of
/// every input taken up and how its verifier ended.
pub fn work(exe: &Path, program: &ProgramStore, anchor: Anchor, mut each: impl FnMut(&str)) -> Result<(), ServiceError> {
    let irs = std::env::current_exe().map_err(ServiceError::Spawn)?;
    let Some(mut lock) = try_lock(program)? else {
        each("another worker runs for this program");
        return Ok(());
    };
    lock.say_pid();
    loop {
        let Some(key) = queue::next(program) else {
            drop(lock);
            // A run may have queued an input just before we let go (see the module doc).
            if queue::next(program).is_none() {
                return Ok(());
            }
            match try_lock(program)? {
                Some(l) => {
                    lock = l;
                    lock.say_pid();
                }
                None => return Ok(()),
            }
            continue;
        };
        let input = program.input(key);
        if matches!(state::status(&input), Status::Running(_) | Status::Finished(_)) {
            queue::remove(program, key);
            continue;
        }
        // Off the queue as it starts: should the worker die now, the input's state says so
        // (stale, or none) and the next run queues it again.
        queue::remove(program, key);
        each(&format!("verifying input {key}"));
        let log = std::fs::File::create(input.log_file());
        // `irs verify` with its default memory limit (half the machine's RAM, see
        // docs/src/verifier-memory.md): an input whose exploration reaches it ends `incomplete`.
        let result = match log.and_then(|l| Ok((l.try_clone()?, l))) {
            Ok((out, err)) => std::process::Command::new(&irs)
                .args(["verify", "--publish", "--anchor", anchor.name(), "--input"])
                .arg(key.to_string())
                .arg("--")
                .arg(exe)
                .stdin(std::process::Stdio::null())
                .stdout(out)
                .stderr(err)
                .status(),
            Err(e) => Err(e),
        };
        let ended = match result {
            Ok(st) => format!("the verifier ended ({st})"),
            Err(e) => format!("cannot start the verifier: {e}"),
        };
        each(&format!("input {key}: {ended}"));
        if state::read_state(&input.state_file()).is_none() {
            // It said nothing (it could not start, or not write its state): say it for it, so
            // that nobody waits for it. A state left `running` stays: stale, queued again.
            let st = state::VerifierState {
                program: exe.display().to_string(),
                state: "failed".into(),
                error: Some(format!("{ended} without a state; its log: {}", input.log_file().display())),
                updated: state::now_unix(),
                ..Default::default()
            };
            let _ = state::write_state(&input.state_file(), &st);
        }
    }
}
