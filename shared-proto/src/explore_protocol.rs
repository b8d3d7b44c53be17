//! The messages between the executor (irs-verifier) and an instrumented program's fork server
//! (irs-runtime, EXPLORE mode), over two pipes (DESIGN §7). Each message is a little-endian u32
//! length and a bincode body; lengths are bounded so a broken peer cannot make us allocate
//! without limit.

use crate::ids::ProgramId;
use crate::le::{try_get32, try_get64};
use crate::site::SiteInfo;
use crate::symbolizer::GlobalRange;
use crate::SiteId;
use serde::{de::DeserializeOwned, Deserialize, Serialize};
use std::io::{Read, Write};

/// Environment variables the executor sets for the fork server.
pub const ENV_CONTROL_IN: &str = "IRS_CONTROL_IN";
pub const ENV_CONTROL_OUT: &str = "IRS_CONTROL_OUT";
pub const ENV_BUFFER_FD: &str = "IRS_BUFFER_FD";
pub const ENV_BUFFER_BYTES: &str = "IRS_BUFFER_BYTES";
pub const ENV_STDIN_FD: &str = "IRS_STDIN_FD";
pub const ENV_STACK_KB: &str = "IRS_STACK_KB";
/// Set (to anything): fork a process per execution instead of running executions in the
/// persistent worker.
pub const ENV_FORK_EACH: &str = "IRS_EXPLORE_FORK";
/// The values a call of `__VERIFIER_nondet_*` explores: comma-separated integers, each held as
/// the call's type holds it (a `bool`'s are always 0 and 1).
pub const ENV_NONDET_VALUES: &str = "IRS_NONDET_VALUES";
pub const DEFAULT_NONDET_VALUES: [i64; 2] = [0, 1];
/// Set (to anything): read the program with SV-COMP's conventions (`abort()` ends an execution the
/// program rules out, as a failed `__VERIFIER_assume` does, instead of being a violation).
pub const ENV_SVCOMP: &str = "IRS_SVCOMP";
/// `irs verify --spin-bound K`: watched loops iterate up to K times without change, then the
/// execution is discarded (instead of the spinning thread halting at its first such iteration).
pub const ENV_SPIN_BOUND: &str = "IRS_SPIN_BOUND";
/// Set (to anything): `irs verify --spurious-wake-ups`: a wait on a program's condition variable
/// may return without a signal wherever the exploration puts it (as POSIX allows).
pub const ENV_SPURIOUS_WAKE_UPS: &str = "IRS_SPURIOUS_WAKE_UPS";
/// `irs verify --max-threads N`: a thread about to create its (N+1)-th thread ends the process
/// there instead (as `_exit` would, without exit handlers), and the execution's outcome says so.
pub const ENV_MAX_THREADS: &str = "IRS_MAX_THREADS";
/// What an execution that would run more threads than EXPLORE can says (after "the program
/// creates more than N "): `irs verify` recognises it to verify again under a default bound.
pub const THREAD_CAPACITY: &str = "threads (EXPLORE's limit";
/// An empty directory of the verifier's scratch space: the program isolates its executions in
/// namespaces of their own and builds their private view of the file system on a mount over
/// it (DESIGN §7, "an explored execution does no harm"). Unset: executions are not isolated.
pub const ENV_SANDBOX_DIR: &str = "IRS_SANDBOX_DIR";

const MAX_MESSAGE: u32 = 64 << 20;

/// Bumped whenever a message or the explore buffer changes shape: a program built by another
/// irs is refused with a clear message instead of being misread.
pub const PROTOCOL_VERSION: u32 = 11;

/// The fork server's first message: who it is.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Hello {
    /// [`PROTOCOL_VERSION`] of the runtime the program was linked with. First, so that it
    /// decodes whatever follows.
    pub protocol: u32,
    pub program_id: ProgramId,
    pub argv: Vec<String>,
    pub sites: Vec<(SiteId, SiteInfo)>,
    pub globals: Vec<GlobalRange>,
    /// Where the executable's statics lie in the server (and so in every execution it forks).
    pub image: crate::image_range::ImageRange,
    /// Problems with the program's embedded tables, for the executor to report.
    pub problems: Vec<String>,
}

/// Run one execution. Requests and responses have a fixed binary encoding that the fork server
/// reads and writes without allocating: its heap must look the same at every fork, so that
/// every execution of a schedule sees the same addresses (see `encode_request`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Request {
    pub kind: RequestKind,
    /// Thread ids to follow, one per scheduling decision from the start of the execution; then
    /// the default policy. For `Snapshot`: the prefix to pause after.
    pub schedule: Vec<u32>,
    /// Kill the execution after this long.
    pub timeout_ms: u64,
    /// How to choose after the schedule.
    pub policy: Policy,
}

/// How a controlled execution chooses the next thread once its schedule is used up.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Policy {
    /// Keep running the current thread while it is enabled, else the lowest enabled id: fewest
    /// preemptions, deterministic.
    Default,
    /// Uniformly at random among the enabled threads, from a seed.
    Random(u64),
    /// The next enabled thread after the current one, by id, at every step: as many
    /// preemptions as possible, deterministic.
    RoundRobin,
    /// As `Default`, except that watched loops iterate instead of halting a thread at an
    /// iteration that only read (a thread that would only repeat its last iteration, with
    /// nothing it read written since, does not run while another can; when none other can, the
    /// execution is discarded), and the steps of such iterations are flagged `read_only`. For
    /// finding a complete execution to anchor a published prefix on.
    Anchor,
    /// `RoundRobin` with loops iterating and read-only iterations flagged, as `Anchor` is
    /// `Default`'s (for `irs bench overhead`'s round-robin first trace).
    AnchorRoundRobin,
    /// The schedule is an order of threads to follow as far as it goes, not a strict one: at
    /// each decision the first entry not yet taken whose thread is enabled is taken (an entry
    /// of a thread that is not is kept for later), then `RoundRobin`. For following a run with
    /// real threads (`irs_verifier::natural_run`), whose order a controlled execution cannot
    /// always take step for step.
    Follow,
    /// `Follow` with loops iterating and read-only iterations flagged, as `Anchor` is
    /// `Default`'s (a thread that would only repeat its last iteration is not enabled for it),
    /// then `AnchorRoundRobin`.
    FollowAnchor,
}

impl Policy {
    /// The same choices with watched loops iterating and their read-only iterations flagged
    /// (`Anchor`), where there is such a policy.
    pub fn iterating(self) -> Option<Policy> {
        match self {
            Policy::Default => Some(Policy::Anchor),
            Policy::RoundRobin => Some(Policy::AnchorRoundRobin),
            Policy::Follow => Some(Policy::FollowAnchor),
            _ => None,
        }
    }

    /// Do watched loops iterate under it (instead of halting the thread)?
    pub fn iterates(self) -> bool {
        matches!(self, Policy::Anchor | Policy::AnchorRoundRobin | Policy::FollowAnchor)
    }

    /// Is the schedule an order to follow as far as it goes (`Follow`), not a strict one?
    pub fn follows(self) -> bool {
        matches!(self, Policy::Follow | Policy::FollowAnchor)
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RequestKind {
    /// Run one execution (from the innermost snapshot, if there is one).
    Run,
    /// Run the schedule, then pause at the next decision and serve further requests from
    /// there (answered with [`ProcessEnd::SnapshotReady`], or as a run if the execution ended
    /// first).
    Snapshot,
    /// End the innermost snapshot; the level below answers the request that made it.
    Release,
}

/// How the execution's process ended, as the fork server saw it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ProcessEnd {
    Exited(i32),
    Signaled(i32),
    TimedOut,
    /// A `Snapshot` request's execution paused where asked and now serves requests.
    SnapshotReady,
    /// A `Snapshot` request's execution reached the requested step but could not pause there
    /// (it had changed its private file system view, which continuations cannot share); the
    /// level that made it answers next, as for a release.
    SnapshotDeclined,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Response {
    pub end: ProcessEnd,
    /// What the execution printed on stdout and stderr (at most 64 KiB).
    pub output: Vec<u8>,
    /// Time from fork to the end of the execution, in microseconds; for the persistent worker,
    /// from the request to the end plus the memory restore before it (which it does after
    /// answering the previous request).
    pub micros: u64,
    /// Of which the set-up: the fork call in the server, or the persistent worker's memory
    /// restore.
    pub setup_micros: u64,
    /// When the execution ended, as the server saw it: `CLOCK_MONOTONIC` in microseconds (the
    /// executor's clock too, so it can tell how long it went on after the end; 0: not known).
    pub ended_at: u64,
}

#[derive(Debug, thiserror::Error)]
pub enum ProtocolError {
    #[error("the peer closed the channel")]
    Closed,
    #[error("channel error: {0}")]
    Io(#[from] std::io::Error),
    #[error("malformed message: {0}")]
    Malformed(String),
}

pub fn send<T: Serialize>(w: &mut impl Write, msg: &T) -> Result<(), ProtocolError> {
    let body = crate::codec::encode(msg);
    let mut frame = Vec::with_capacity(4 + body.len());
    frame.extend_from_slice(&(body.len() as u32).to_le_bytes());
    frame.extend_from_slice(&body);
    w.write_all(&frame)?;
    w.flush()?;
    Ok(())
}

pub fn receive<T: DeserializeOwned>(r: &mut impl Read) -> Result<T, ProtocolError> {
    let mut len = [0u8; 4];
    match r.read_exact(&mut len) {
        Err(e) if e.kind() == std::io::ErrorKind::UnexpectedEof => return Err(ProtocolError::Closed),
        other => other?,
    }
    let len = u32::from_le_bytes(len);
    if len > MAX_MESSAGE {
        return Err(ProtocolError::Malformed(format!("{len}-byte message")));
    }
    let mut body = vec![0u8; len as usize];
    r.read_exact(&mut body)?;
    crate::codec::decode(&body).map_err(|e| ProtocolError::Malformed(e.to_string()))
}

/// Receive the fork server's [`Hello`], refusing one of another protocol version with a
/// message that says what to do.
pub fn receive_hello(r: &mut impl Read) -> Result<Hello, ProtocolError> {
    let mut len = [0u8; 4];
    match r.read_exact(&mut len) {
        Err(e) if e.kind() == std::io::ErrorKind::UnexpectedEof => return Err(ProtocolError::Closed),
        other => other?,
    }
    let len = u32::from_le_bytes(len);
    if !(4..=MAX_MESSAGE).contains(&len) {
        return Err(ProtocolError::Malformed(format!("{len}-byte hello")));
    }
    let mut body = vec![0u8; len as usize];
    r.read_exact(&mut body)?;
    let version = u32::from_le_bytes(body[..4].try_into().unwrap());
    if version != PROTOCOL_VERSION {
        return Err(ProtocolError::Malformed(format!(
            "it was linked with an irs runtime of another version (protocol {version}, this irs speaks {PROTOCOL_VERSION}); rebuild it with this `irs cc`"
        )));
    }
    crate::codec::decode(&body).map_err(|e| ProtocolError::Malformed(e.to_string()))
}

/// The longest schedule a request can carry.
pub const MAX_SCHEDULE: usize = 1 << 16;
/// Bytes of a request frame's body at most.
pub const MAX_REQUEST: usize = 32 + 4 * MAX_SCHEDULE;
/// Output kept per execution.
pub const MAX_OUTPUT: usize = 64 * 1024;
/// Bytes of a response frame's body at most.
pub const MAX_RESPONSE: usize = RESPONSE_HEADER + MAX_OUTPUT;

const REQUEST_MAGIC: u32 = u32::from_le_bytes(*b"IRSQ");
const RESPONSE_MAGIC: u32 = u32::from_le_bytes(*b"IRSR");
/// A response body's fixed part: magic, end kind, its value, micros, set-up micros, end time,
/// output length.
const RESPONSE_HEADER: usize = 40;


/// A request frame (length prefix included), for the executor. Body: magic, kind, timeout,
/// policy, seed, schedule length, schedule (all little-endian).
pub fn encode_request(r: &Request) -> Vec<u8> {
    let kind: u32 = match r.kind {
        RequestKind::Run => 0,
        RequestKind::Snapshot => 1,
        RequestKind::Release => 2,
    };
    let mut body = Vec::with_capacity(32 + 4 * r.schedule.len());
    body.extend_from_slice(&REQUEST_MAGIC.to_le_bytes());
    body.extend_from_slice(&kind.to_le_bytes());
    body.extend_from_slice(&r.timeout_ms.to_le_bytes());
    let (policy, seed): (u32, u64) = match r.policy {
        Policy::Default => (0, 0),
        Policy::Random(s) => (1, s),
        Policy::RoundRobin => (2, 0),
        Policy::Anchor => (3, 0),
        Policy::AnchorRoundRobin => (4, 0),
        Policy::Follow => (5, 0),
        Policy::FollowAnchor => (6, 0),
    };
    body.extend_from_slice(&policy.to_le_bytes());
    body.extend_from_slice(&seed.to_le_bytes());
    body.extend_from_slice(&(r.schedule.len() as u32).to_le_bytes());
    for t in &r.schedule {
        body.extend_from_slice(&t.to_le_bytes());
    }
    let mut frame = (body.len() as u32).to_le_bytes().to_vec();
    frame.extend_from_slice(&body);
    frame
}

/// A decoded request whose schedule stays in the caller's buffer (no allocation).
pub struct RequestView<'a> {
    pub kind: RequestKind,
    pub timeout_ms: u64,
    pub policy: Policy,
    body: &'a [u8],
    len: usize,
}

impl RequestView<'_> {
    pub fn schedule_len(&self) -> usize {
        self.len
    }
    pub fn schedule_at(&self, i: usize) -> u32 {
        try_get32(self.body, 32 + 4 * i).expect("checked by decode_request")
    }
}

/// Decode a request body (after its length prefix) without allocating.
pub fn decode_request(body: &[u8]) -> Option<RequestView<'_>> {
    if try_get32(body, 0)? != REQUEST_MAGIC {
        return None;
    }
    let kind = match try_get32(body, 4)? {
        0 => RequestKind::Run,
        1 => RequestKind::Snapshot,
        2 => RequestKind::Release,
        _ => return None,
    };
    let n = try_get32(body, 28)? as usize;
    if n > MAX_SCHEDULE || body.len() != 32 + 4 * n {
        return None;
    }
    let policy = match try_get32(body, 16)? {
        0 => Policy::Default,
        1 => Policy::Random(try_get64(body, 20)?),
        2 => Policy::RoundRobin,
        3 => Policy::Anchor,
        4 => Policy::AnchorRoundRobin,
        5 => Policy::Follow,
        6 => Policy::FollowAnchor,
        _ => return None,
    };
    Some(RequestView { kind, timeout_ms: try_get64(body, 8)?, policy, body, len: n })
}

/// Write a response frame (length prefix included) into `buf` without allocating; returns its
/// length. `buf` must hold `4 + MAX_RESPONSE` bytes; output beyond MAX_OUTPUT is cut.
pub fn encode_response_into(buf: &mut [u8], end: ProcessEnd, micros: u64, setup_micros: u64, ended_at: u64, output: &[u8]) -> usize {
    let out = &output[..output.len().min(MAX_OUTPUT)];
    let (kind, value) = match end {
        ProcessEnd::Exited(c) => (0u32, c),
        ProcessEnd::Signaled(s) => (1, s),
        ProcessEnd::TimedOut => (2, 0),
        ProcessEnd::SnapshotReady => (3, 0),
        ProcessEnd::SnapshotDeclined => (4, 0),
    };
    let body_len = RESPONSE_HEADER + out.len();
    buf[0..4].copy_from_slice(&(body_len as u32).to_le_bytes());
    buf[4..8].copy_from_slice(&RESPONSE_MAGIC.to_le_bytes());
    buf[8..12].copy_from_slice(&kind.to_le_bytes());
    buf[12..16].copy_from_slice(&value.to_le_bytes());
    buf[16..24].copy_from_slice(&micros.to_le_bytes());
    buf[24..32].copy_from_slice(&setup_micros.to_le_bytes());
    buf[32..40].copy_from_slice(&ended_at.to_le_bytes());
    buf[40..44].copy_from_slice(&(out.len() as u32).to_le_bytes());
    buf[44..44 + out.len()].copy_from_slice(out);
    4 + body_len
}

pub fn decode_response(body: &[u8]) -> Option<Response> {
    if try_get32(body, 0)? != RESPONSE_MAGIC {
        return None;
    }
    let value = try_get32(body, 8)? as i32;
    let end = match try_get32(body, 4)? {
        0 => ProcessEnd::Exited(value),
        1 => ProcessEnd::Signaled(value),
        2 => ProcessEnd::TimedOut,
        3 => ProcessEnd::SnapshotReady,
        4 => ProcessEnd::SnapshotDeclined,
        _ => return None,
    };
    let n = try_get32(body, 36)? as usize;
    if n > MAX_OUTPUT || body.len() != RESPONSE_HEADER + n {
        return None;
    }
    Some(Response {
        end,
        micros: try_get64(body, 12)?,
        setup_micros: try_get64(body, 20)?,
        ended_at: try_get64(body, 28)?,
        output: body[RESPONSE_HEADER..].to_vec(),
    })
}

/// How long one end of the explore channel polls for the next frame before it sleeps on the
/// pipe, adapted to what polling costs. Both ends wait for each other's frames for tens to
/// hundreds of µs at a time, and a process asleep on a pipe takes tens of µs to wake on this VM
/// (its idle CPU has to be woken first): polling first halves the cost of a short execution.
/// But when other work keeps the CPUs busy, a polling process competes with it for its time
/// slices (and loses the priority the scheduler gives a woken sleeper), and waits of µs turn
/// into waits of ms. So when polling runs out, it looks at how much of the CPU it got meanwhile:
/// nearly all of it (the CPU was idle but for us: polling costs nothing) and the budget doubles,
/// up to its maximum; much less (others wanted the CPU) and it halves, down to nothing; with
/// nothing, a short probe now and then tells whether polling pays again.
#[derive(Clone, Copy, Debug)]
pub struct SpinBudget {
    limit_us: u32,
    max_us: u32,
    /// Waits since the budget ran out (a probe every `PROBE_EVERY`).
    idle: u32,
}

const PROBE_EVERY: u32 = 256;
const PROBE_US: u32 = 20;

/// A clock (`libc::CLOCK_MONOTONIC`, `CLOCK_THREAD_CPUTIME_ID`, …) in µs; through the vDSO,
/// tens of ns.
pub fn clock_micros(clock: libc::clockid_t) -> u64 {
    let mut ts = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: reading a clock into a local.
    unsafe { libc::clock_gettime(clock, &mut ts) };
    ts.tv_sec as u64 * 1_000_000 + ts.tv_nsec as u64 / 1000
}

fn thread_cpu_micros() -> u64 {
    clock_micros(libc::CLOCK_THREAD_CPUTIME_ID)
}

impl SpinBudget {
    pub const fn new(max_us: u32) -> SpinBudget {
        SpinBudget { limit_us: max_us, max_us, idle: 0 }
    }

    /// The current budget, in µs.
    pub fn limit_us(&self) -> u32 {
        self.limit_us
    }

    /// The rule applied when a wait of `limit` µs ran out: `wall` µs passed, of which the
    /// thread had the CPU for `cpu`.
    fn spent(&mut self, limit: u32, wall: u64, cpu: u64) {
        if cpu * 10 >= wall * 9 {
            // The CPU was ours all along: polling longer costs nothing.
            self.limit_us = limit.saturating_mul(2).min(self.max_us);
            self.idle = 0;
        } else {
            self.limit_us /= 2;
            if self.limit_us < PROBE_US {
                self.limit_us = 0;
            }
        }
    }

    /// Poll `fd` until it is readable or the budget is spent; a read of the next frame then does
    /// not sleep, or sleeps as it would have anyway.
    pub fn wait_readable(&mut self, fd: i32) {
        let mut w = self.begin();
        self.wait_or(&mut w, fd, || false);
    }

    /// Start a wait for `fd`, which [`wait_or`](Self::wait_or) may leave and resume: the budget
    /// counts from here.
    pub fn begin(&mut self) -> SpinWait {
        let limit = if self.limit_us > 0 {
            self.limit_us
        } else {
            self.idle += 1;
            if self.idle % PROBE_EVERY != 0 {
                return SpinWait { started: std::time::Instant::now(), cpu_at_start: 0, limit: 0, spent: true };
            }
            PROBE_US
        };
        SpinWait { started: std::time::Instant::now(), cpu_at_start: thread_cpu_micros(), limit, spent: false }
    }

    /// Poll `fd` until it is readable ([`Woke::Readable`]), `progress` returns true (checked
    /// first, [`Woke::Progress`]: the wait can be resumed), or the wait's budget is spent
    /// ([`Woke::Spent`], at once when it was before: a read then sleeps until `fd` is readable).
    pub fn wait_or(&mut self, w: &mut SpinWait, fd: i32, mut progress: impl FnMut() -> bool) -> Woke {
        if w.spent {
            return Woke::Spent;
        }
        let budget = std::time::Duration::from_micros(w.limit as u64);
        let mut p = libc::pollfd { fd, events: libc::POLLIN, revents: 0 };
        loop {
            if progress() {
                return Woke::Progress;
            }
            // SAFETY: polling the caller's descriptor with a zero timeout.
            if unsafe { libc::poll(&mut p, 1, 0) } != 0 {
                if self.limit_us == 0 {
                    // A probe caught it: polling pays again.
                    self.limit_us = self.max_us;
                    self.idle = 0;
                }
                return Woke::Readable;
            }
            let wall = w.started.elapsed();
            if wall >= budget {
                let cpu = thread_cpu_micros().saturating_sub(w.cpu_at_start);
                self.spent(w.limit, wall.as_micros() as u64, cpu);
                w.spent = true;
                return Woke::Spent;
            }
            // Yield between polls: when another task wants this CPU it runs, and the CPU time
            // we got tells (the rule above) that polling is in the way; when none does, the
            // yield returns at once.
            // SAFETY: sched_yield has no preconditions.
            unsafe { libc::sched_yield() };
        }
    }
}

/// One wait of a [`SpinBudget`]: when it started, the thread's CPU time then, its budget.
#[derive(Clone, Copy, Debug)]
pub struct SpinWait {
    started: std::time::Instant,
    cpu_at_start: u64,
    limit: u32,
    spent: bool,
}

/// Why [`SpinBudget::wait_or`] returned.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Woke {
    Progress,
    Readable,
    Spent,
}

/// Read one frame's body into `buf` (no allocation); its length.
pub fn read_frame_into(r: &mut impl Read, buf: &mut [u8]) -> Result<usize, ProtocolError> {
    let mut len = [0u8; 4];
    match r.read_exact(&mut len) {
        Err(e) if e.kind() == std::io::ErrorKind::UnexpectedEof => return Err(ProtocolError::Closed),
        other => other?,
    }
    let len = u32::from_le_bytes(len) as usize;
    if len > buf.len() {
        return Err(ProtocolError::Malformed(String::new()));
    }
    r.read_exact(&mut buf[..len])?;
    Ok(len)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};

    /// A fresh pipe, `(read end, write end)`, closed when dropped.
    fn pipe() -> (OwnedFd, OwnedFd) {
        let mut fds = [0i32; 2];
        // SAFETY: a fresh pipe; each descriptor is owned by one `OwnedFd` from here on.
        unsafe {
            assert_eq!(libc::pipe(fds.as_mut_ptr()), 0);
            (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1]))
        }
    }

    #[test]
    fn a_wait_stops_at_progress_or_an_answer_and_not_after_its_budget() {
        let (r, w) = pipe();
        let mut b = SpinBudget::new(10_000_000);
        let mut wait = b.begin();
        let mut polls = 0;
        let woke = b.wait_or(&mut wait, r.as_raw_fd(), || {
            polls += 1;
            polls == 3
        });
        assert_eq!((woke, polls), (Woke::Progress, 3));
        // SAFETY: writing a byte to our own pipe.
        assert_eq!(unsafe { libc::write(w.as_raw_fd(), b"x".as_ptr().cast(), 1) }, 1);
        assert_eq!(b.wait_or(&mut wait, r.as_raw_fd(), || false), Woke::Readable);
        // A budget of 1 µs is spent at once, and a spent wait polls nothing more.
        let (r, _w) = pipe();
        let mut b = SpinBudget::new(1);
        let mut wait = b.begin();
        assert_eq!(b.wait_or(&mut wait, r.as_raw_fd(), || false), Woke::Spent);
        assert_eq!(b.wait_or(&mut wait, r.as_raw_fd(), || true), Woke::Spent);
    }

    #[test]
    fn spin_budget_doubles_when_the_cpu_was_ours_and_halves_when_taken() {
        let (r, _w) = pipe();
        // The rule: the CPU ours (≥ 90% of the wait) and the budget doubles up to its maximum;
        // taken, and it halves down to nothing. (Measured below on a CPU made busy on purpose;
        // an idle CPU cannot be had on demand on a loaded test machine.)
        let mut b = SpinBudget::new(800);
        b.limit_us = 100;
        let mut seen = Vec::new();
        for _ in 0..4 {
            let limit = b.limit_us();
            b.spent(limit, limit as u64, limit as u64 * 95 / 100);
            seen.push(b.limit_us());
        }
        assert_eq!(seen, [200, 400, 800, 800]);
        for _ in 0..6 {
            let limit = b.limit_us();
            b.spent(limit, limit as u64, limit as u64 / 2);
            seen.push(b.limit_us());
        }
        assert_eq!(seen[4..], [400, 200, 100, 50, 25, 0]);
        // Taken for real: a busy thread on the same CPU gets half of it, and the budget shrinks.
        // SAFETY: pinning this thread to CPU 0 (and restoring its mask below).
        let mut old: libc::cpu_set_t = unsafe { std::mem::zeroed() };
        unsafe { libc::sched_getaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &mut old) };
        let pin = || {
            // SAFETY: a set with CPU 0 only, applied to the calling thread.
            unsafe {
                let mut one: libc::cpu_set_t = std::mem::zeroed();
                libc::CPU_SET(0, &mut one);
                libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &one);
            }
        };
        pin();
        let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
        let hog = {
            let stop = stop.clone();
            std::thread::spawn(move || {
                pin();
                // Relaxed: a flag to end a busy loop; nothing else is published through it.
                while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                    std::hint::spin_loop();
                }
            })
        };
        std::thread::sleep(std::time::Duration::from_millis(20));
        b.limit_us = 800;
        let mut shrank = false;
        for _ in 0..8 {
            b.wait_readable(r.as_raw_fd());
            shrank |= b.limit_us() < 800;
        }
        stop.store(true, std::sync::atomic::Ordering::Relaxed);
        hog.join().unwrap();
        // SAFETY: restoring this thread's CPU mask.
        unsafe { libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &old) };
        assert!(shrank, "a budget polled on a shared CPU should shrink");
    }

    #[test]
    fn spin_budget_probes_when_it_has_run_out_and_recovers() {
        let (r, w) = pipe();
        let mut b = SpinBudget::new(400);
        b.limit_us = 0;
        // SAFETY: writing a byte into our own pipe.
        assert_eq!(unsafe { libc::write(w.as_raw_fd(), [1u8].as_ptr() as *const libc::c_void, 1) }, 1);
        let mut waits = 0;
        while b.limit_us() == 0 {
            b.wait_readable(r.as_raw_fd());
            waits += 1;
        }
        assert_eq!((waits, b.limit_us()), (PROBE_EVERY, 400));
    }

    #[test]
    fn bincode_frames_round_trip_and_bad_frames_are_rejected() {
        let mut wire = Vec::new();
        let msg = vec![1u32, 2, 3];
        send(&mut wire, &msg).unwrap();
        assert_eq!(receive::<Vec<u32>>(&mut wire.as_slice()).unwrap(), msg);
        assert!(matches!(receive::<Vec<u32>>(&mut &wire[..3]), Err(ProtocolError::Closed)));
        assert!(matches!(receive::<Vec<u32>>(&mut &[0xff, 0xff, 0xff, 0xff][..]), Err(ProtocolError::Malformed(_))));
        let mut short = wire.clone();
        short.truncate(wire.len() - 1);
        assert!(receive::<Vec<u32>>(&mut short.as_slice()).is_err());
    }

    #[test]
    fn fixed_frames_round_trip_without_allocation_on_the_server_side() {
        let req = Request { kind: RequestKind::Snapshot, schedule: vec![0, 1, 1, 2], timeout_ms: 10_000, policy: Policy::Random(3) };
        let frame = encode_request(&req);
        let mut buf = vec![0u8; MAX_REQUEST];
        let n = read_frame_into(&mut frame.as_slice(), &mut buf).unwrap();
        let v = decode_request(&buf[..n]).unwrap();
        assert_eq!((v.kind, v.timeout_ms, v.policy, v.schedule_len()), (RequestKind::Snapshot, 10_000, Policy::Random(3), 4));
        assert_eq!((0..4).map(|i| v.schedule_at(i)).collect::<Vec<_>>(), req.schedule);
        assert!(decode_request(&buf[..n - 1]).is_none());

        let mut out = vec![0u8; 4 + MAX_RESPONSE];
        let len = encode_response_into(&mut out, ProcessEnd::Signaled(11), 42, 7, 123_456, b"hello");
        let n = read_frame_into(&mut &out[..len], &mut buf).unwrap();
        assert_eq!(
            decode_response(&buf[..n]).unwrap(),
            Response { end: ProcessEnd::Signaled(11), micros: 42, setup_micros: 7, ended_at: 123_456, output: b"hello".to_vec() }
        );
        assert!(decode_response(&buf[..n - 1]).is_none());
    }
}
