//! What a background verifier says about itself (DESIGN §4 "Publishing" and "Inputs"): one state
//! file per input, JSON, replaced atomically, kept up to date by `irs verify --status-file`. A
//! state that says `running` whose process is gone is *stale*: the last published prefix stays in
//! force (it is safe) and the input goes back to the queue.

use super::store::{self, InputStore};
use serde::{Deserialize, Serialize};
use std::path::Path;
use std::time::{Duration, Instant};

/// What the background verifier says about itself.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
pub struct VerifierState {
    pub pid: u32,
    pub program: String,
    pub args: Vec<String>,
    /// `running`, `done` or `failed`.
    pub state: String,
    pub verdict: Option<String>,
    /// What the verdict covers (the input, the values explored, any bound).
    #[serde(default)]
    pub covers: Option<String>,
    pub error: Option<String>,
    pub executions: u64,
    pub traces: u64,
    pub ssb: u64,
    /// Prefixes published so far (the first table included).
    pub published: usize,
    /// Constraints in the latest published prefix.
    pub constraints: Option<usize>,
    /// What the published table is anchored on, when it is not the default schedule or was
    /// chosen (`service::anchor`).
    #[serde(default)]
    pub anchor: Option<String>,
    pub violations: Vec<String>,
    pub seconds: f64,
    /// Unix time of this state.
    pub updated: u64,
}

pub fn now_unix() -> u64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_secs()).unwrap_or(0)
}

/// Write the state atomically (a reader never sees half of it).
pub fn write_state(path: &Path, s: &VerifierState) -> std::io::Result<()> {
    let json = serde_json::to_vec(s).map_err(std::io::Error::other)?;
    store::write_atomically(path, &json).map_err(std::io::Error::other)
}

pub fn read_state(path: &Path) -> Option<VerifierState> {
    serde_json::from_slice(&std::fs::read(path).ok()?).ok()
}

/// Whether process `pid` exists and has not died (a killed verifier nobody has reaped yet is
/// a zombie: dead).
pub fn alive(pid: u32) -> bool {
    // SAFETY: signal 0 only checks that the process exists and may be signalled.
    if pid == 0 || unsafe { libc::kill(pid as i32, 0) } != 0 {
        return false;
    }
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        // The state follows the command name in parentheses.
        Ok(stat) => stat.rsplit_once(')').and_then(|(_, rest)| rest.split_whitespace().next()).is_none_or(|st| st != "Z" && st != "X"),
        Err(_) => false,
    }
}

/// How an input's verification stands.
#[derive(Clone, Debug)]
pub enum Status {
    /// No verifier has run for this input yet.
    None,
    Running(VerifierState),
    Finished(VerifierState),
    /// The state says running, but its process is gone (killed, crashed).
    Stale(VerifierState),
}

impl Status {
    pub fn word(&self) -> &'static str {
        match self {
            Status::None => "not started",
            Status::Running(_) => "running",
            Status::Finished(_) => "finished",
            Status::Stale(_) => "STALE",
        }
    }
    pub fn state(&self) -> Option<&VerifierState> {
        match self {
            Status::None => None,
            Status::Running(s) | Status::Finished(s) | Status::Stale(s) => Some(s),
        }
    }
}

pub fn status(input: &InputStore) -> Status {
    match read_state(&input.state_file()) {
        None => Status::None,
        Some(s) if s.state == "running" && !alive(s.pid) => Status::Stale(s),
        Some(s) if s.state == "running" => Status::Running(s),
        Some(s) => Status::Finished(s),
    }
}

/// Kill a process that a state says is a verifier, if it is still one of ours running
/// `irs verify` or `irs worker` (a recycled pid is left alone), and reap it if it is our child.
pub fn stop_process(pid: u32) {
    if !alive(pid) {
        return;
    }
    let cmdline = std::fs::read(format!("/proc/{pid}/cmdline")).unwrap_or_default();
    let args: Vec<&[u8]> = cmdline.split(|&b| b == 0).collect();
    if !(args.contains(&&b"verify"[..]) || args.contains(&&b"worker"[..])) {
        return;
    }
    // SAFETY: signals a process we just identified as a verifier of this user's program (the
    // kill fails for other users' processes); waitpid with WNOHANG only reaps it if it is our
    // child and has ended, and fails harmlessly otherwise.
    unsafe {
        libc::kill(pid as i32, libc::SIGKILL);
        let started = Instant::now();
        while alive(pid) && started.elapsed() < Duration::from_secs(2) {
            libc::waitpid(pid as i32, std::ptr::null_mut(), libc::WNOHANG);
            std::thread::sleep(Duration::from_millis(5));
        }
        libc::waitpid(pid as i32, std::ptr::null_mut(), libc::WNOHANG);
    }
}
