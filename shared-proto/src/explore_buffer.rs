//! The shared-memory buffer an EXPLORE child writes its execution into (DESIGN §7, issue 3).
//!
//! The executor creates it (a memfd) and the fork server's children inherit it. A child writes
//! fixed-size little-endian records as things happen, so nothing is lost when it crashes, and
//! allocates nothing while doing so. The executor decodes the buffer after the child ended,
//! checking every count and code before use: a corrupt buffer is an error, never a wrong trace.
//!
//! Layout: a header (magic, version, capacities, counts, outcome, message, thread table), then
//! the event records, the step records and the enabled-operation records.

use crate::le::{get32, get64, put32, put64};
use crate::event::{Event, EventKind, PendingOp, Step};
use crate::ids::{SiteId, ThreadId};
use crate::logical_addr::LogicalAddr;
use crate::outcome::{Outcome, ViolationKind};
use crate::trace::ThreadInfo;

pub const BUFFER_MAGIC: u64 = u64::from_le_bytes(*b"IRSXPLR1");
pub const BUFFER_VERSION: u32 = 2;
/// Logical threads one execution may have (the enabled set of a step is a 64-bit mask).
pub const MAX_THREADS: usize = 64;
/// The `chosen` of a last, pseudo step that lists the operations the threads left blocked at a
/// deadlock were waiting to perform.
pub const BLOCKED_STEP: u32 = u32::MAX;
pub const MESSAGE_LEN: usize = 1024;

const HEADER: usize = 4096;
const THREADS_AT: usize = MESSAGE + MESSAGE_LEN; // the fixed fields, the message, then the thread table
const THREAD_RECORD: usize = 16;
const EVENT: usize = 56;
const STEP: usize = 20;
const ENABLED: usize = 56;

/// How many records of each kind a buffer holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Capacity {
    pub events: u32,
    pub steps: u32,
    pub enabled: u32,
}

impl Capacity {
    pub const DEFAULT: Capacity = Capacity { events: 1 << 16, steps: 1 << 16, enabled: 1 << 18 };

    pub fn bytes(self) -> usize {
        HEADER + self.events as usize * EVENT + self.steps as usize * STEP + self.enabled as usize * ENABLED
    }
}

/// Outcome codes in the header.
mod code {
    pub const RUNNING: u32 = 0;
    pub const EXIT: u32 = 1;
    pub const VIOLATION: u32 = 2;
    pub const SIGNAL: u32 = 3;
    pub const DEADLOCK: u32 = 4;
    pub const INFEASIBLE: u32 = 5;
    pub const OVERFLOW: u32 = 6;
    pub const UNSUPPORTED: u32 = 7;
}

// Header fields (byte offsets).
const MAGIC: usize = 0;
const VERSION: usize = 8;
const CAP_EVENTS: usize = 12;
const CAP_STEPS: usize = 16;
const CAP_ENABLED: usize = 20;
const N_EVENTS: usize = 24;
const N_STEPS: usize = 28;
const N_ENABLED: usize = 32;
const N_THREADS: usize = 36;
const OUTCOME: usize = 40;
const OUTCOME_VALUE: usize = 44;
const INFEASIBLE_STEP: usize = 48;
const INFEASIBLE_THREAD: usize = 52;
const INFEASIBLE_ENABLED: usize = 56; // u64 mask
const MESSAGE_BYTES: usize = 64;
const MESSAGE: usize = 72;


/// One operation as the buffer keeps it: thread, event kind, site (0 = none), object.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct OpRecord {
    pub tid: u32,
    pub kind: EventKind,
    pub site: Option<SiteId>,
    pub addr: u64,
    pub size: u32,
    pub logical: Option<LogicalAddr>,
}

impl OpRecord {
    fn put(&self, b: &mut [u8], at: usize, k: u32) {
        put32(b, at, self.tid);
        put32(b, at + 4, k);
        put64(b, at + 8, self.site.map_or(0, |s| s.0));
        put32(b, at + 16, self.kind.code());
        put32(b, at + 20, self.size);
        put64(b, at + 24, self.addr);
        let (tag, thread, alloc, offset) = self.logical.map_or((0, 0, 0, 0), |l| l.to_raw());
        put32(b, at + 32, tag);
        put32(b, at + 36, thread);
        put32(b, at + 40, alloc);
        put64(b, at + 48, offset);
    }

    fn get(b: &[u8], at: usize) -> Option<(OpRecord, u32)> {
        let site = get64(b, at + 8);
        Some((
            OpRecord {
                tid: get32(b, at),
                kind: EventKind::from_code(get32(b, at + 16))?,
                site: (site != 0).then_some(SiteId(site)),
                size: get32(b, at + 20),
                addr: get64(b, at + 24),
                logical: LogicalAddr::from_raw(get32(b, at + 32), get32(b, at + 36), get32(b, at + 40), get64(b, at + 48)).ok()?,
            },
            get32(b, at + 4),
        ))
    }

    fn pending(&self) -> PendingOp {
        PendingOp { tid: ThreadId(self.tid), site: self.site, kind: self.kind, object: self.kind.object(self.addr, self.size, self.logical) }
    }
}

/// The child's side. Every method is bounded by the capacities; a full buffer makes the
/// execution end with an overflow outcome instead of writing past the end.
pub struct BufferWriter<'a> {
    b: &'a mut [u8],
    cap: Capacity,
}

/// The counts of a buffer at one point of an execution (see [`BufferWriter::mark`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Mark {
    n: [u32; 4],
}

/// How an execution ended, as the child reports it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ChildOutcome<'m> {
    Exit(i32),
    Violation(ViolationKind, &'m str),
    Signal(i32),
    Deadlock(&'m str),
    Infeasible { step: u32, requested: u32, enabled_mask: u64 },
    /// The buffer is full: the execution is longer than one may be.
    EventLimit,
    Unsupported(&'m str),
}

impl<'a> BufferWriter<'a> {
    /// Start a new execution in `b` (at least `cap.bytes()` long).
    pub fn init(b: &'a mut [u8], cap: Capacity) -> Option<BufferWriter<'a>> {
        if b.len() < cap.bytes() {
            return None;
        }
        b[..HEADER].fill(0);
        put64(b, MAGIC, BUFFER_MAGIC);
        put32(b, VERSION, BUFFER_VERSION);
        put32(b, CAP_EVENTS, cap.events);
        put32(b, CAP_STEPS, cap.steps);
        put32(b, CAP_ENABLED, cap.enabled);
        Some(BufferWriter { b, cap })
    }

    fn events_at(&self) -> usize {
        HEADER
    }
    fn steps_at(&self) -> usize {
        HEADER + self.cap.events as usize * EVENT
    }
    fn enabled_at(&self) -> usize {
        self.steps_at() + self.cap.steps as usize * STEP
    }

    /// Where the execution stands: restoring it ([`reset_to`](Self::reset_to)) makes the
    /// buffer hold exactly what it held then (records after it are simply overwritten).
    pub fn mark(&self) -> Mark {
        Mark { n: [get32(self.b, N_EVENTS), get32(self.b, N_STEPS), get32(self.b, N_ENABLED), get32(self.b, N_THREADS)] }
    }

    /// Back to `mark`, with no outcome yet: how a continuation from a snapshot starts.
    pub fn reset_to(&mut self, mark: Mark) {
        for (field, v) in [N_EVENTS, N_STEPS, N_ENABLED, N_THREADS].into_iter().zip(mark.n) {
            put32(self.b, field, v);
        }
        put32(self.b, OUTCOME, code::RUNNING);
        put32(self.b, MESSAGE_BYTES, 0);
    }

    /// Register logical thread `tid` (dense, in creation order).
    pub fn thread(&mut self, tid: u32, parent: Option<u32>, nth_child: u32) -> bool {
        if tid as usize >= MAX_THREADS {
            return false;
        }
        let at = THREADS_AT + tid as usize * THREAD_RECORD;
        put32(self.b, at, parent.unwrap_or(u32::MAX));
        put32(self.b, at + 4, nth_child);
        put32(self.b, N_THREADS, get32(self.b, N_THREADS).max(tid + 1));
        true
    }

    pub fn event(&mut self, op: &OpRecord, k: u32) -> bool {
        let n = get32(self.b, N_EVENTS);
        if n >= self.cap.events {
            return false;
        }
        let at = self.events_at() + n as usize * EVENT;
        op.put(self.b, at, k);
        put32(self.b, N_EVENTS, n + 1);
        true
    }

    /// A decision: the thread chosen, the enabled operations, and when (µs of the execution's
    /// running time since `main`, counted across the pauses of snapshots).
    pub fn step(&mut self, chosen: u32, enabled: &[OpRecord], micros: u32) -> bool {
        let (ns, ne) = (get32(self.b, N_STEPS), get32(self.b, N_ENABLED));
        if ns >= self.cap.steps || ne as usize + enabled.len() > self.cap.enabled as usize {
            return false;
        }
        let at = self.steps_at() + ns as usize * STEP;
        put32(self.b, at, chosen);
        put32(self.b, at + 4, ne);
        put32(self.b, at + 8, enabled.len() as u32);
        put32(self.b, at + 12, get32(self.b, N_EVENTS));
        put32(self.b, at + 16, micros);
        for (i, op) in enabled.iter().enumerate() {
            op.put(self.b, self.enabled_at() + (ne as usize + i) * ENABLED, 0);
        }
        put32(self.b, N_STEPS, ns + 1);
        put32(self.b, N_ENABLED, ne + enabled.len() as u32);
        true
    }

    /// Record how the execution ended (the first call wins). A thread stopped by a violation or
    /// a crash lets the others go on (EXPLORE), so later violations and crashes are kept too,
    /// as further bugs of the same run.
    pub fn outcome(&mut self, o: ChildOutcome) {
        let current = get32(self.b, OUTCOME);
        if current != code::RUNNING {
            if matches!(current, code::VIOLATION | code::SIGNAL) {
                match o {
                    ChildOutcome::Violation(kind, m) => self.more_bug(b'v', crate::abi::violation_code(kind) as i64, m),
                    ChildOutcome::Signal(sig) => self.more_bug(b's', sig as i64, ""),
                    _ => {}
                }
            }
            return;
        }
        let mut message = |m: &str| {
            let n = m.len().min(MESSAGE_LEN);
            self.b[MESSAGE..MESSAGE + n].copy_from_slice(&m.as_bytes()[..n]);
            put32(self.b, MESSAGE_BYTES, n as u32);
        };
        let (c, v) = match o {
            ChildOutcome::Exit(code) => (code::EXIT, code),
            ChildOutcome::Violation(kind, m) => {
                message(m);
                (code::VIOLATION, crate::abi::violation_code(kind) as i32)
            }
            ChildOutcome::Signal(s) => (code::SIGNAL, s),
            ChildOutcome::Deadlock(m) | ChildOutcome::Unsupported(m) => {
                message(m);
                let c = if matches!(o, ChildOutcome::Deadlock(_)) { code::DEADLOCK } else { code::UNSUPPORTED };
                (c, 0)
            }
            ChildOutcome::EventLimit => (code::OVERFLOW, 0),
            ChildOutcome::Infeasible { step, requested, enabled_mask } => {
                put32(self.b, INFEASIBLE_STEP, step);
                put32(self.b, INFEASIBLE_THREAD, requested);
                put64(self.b, INFEASIBLE_ENABLED, enabled_mask);
                (code::INFEASIBLE, 0)
            }
        };
        put32(self.b, OUTCOME_VALUE, v as u32);
        put32(self.b, OUTCOME, c);
    }
}

impl BufferWriter<'_> {
    /// Append `RS code value US message` to the message area, if it fits whole.
    fn more_bug(&mut self, code: u8, value: i64, message: &str) {
        let used = (get32(self.b, MESSAGE_BYTES) as usize).min(MESSAGE_LEN);
        let mut digits = [0u8; 24];
        let mut n = 0;
        let mut v = value.unsigned_abs();
        loop {
            digits[n] = b'0' + (v % 10) as u8;
            n += 1;
            v /= 10;
            if v == 0 {
                break;
            }
        }
        let neg = value < 0;
        let len = 2 + neg as usize + n + 1 + message.len();
        if used + len > MESSAGE_LEN {
            return;
        }
        let mut at = MESSAGE + used;
        let mut push = |b: &mut [u8], x: u8| {
            b[at] = x;
            at += 1;
        };
        push(self.b, MORE_BUG);
        push(self.b, code);
        if neg {
            push(self.b, b'-');
        }
        for i in (0..n).rev() {
            push(self.b, digits[i]);
        }
        push(self.b, MORE_BUG_MESSAGE);
        self.b[at..at + message.len()].copy_from_slice(message.as_bytes());
        put32(self.b, MESSAGE_BYTES, (used + len) as u32);
    }
}

const MORE_BUG: u8 = 0x1e;
const MORE_BUG_MESSAGE: u8 = 0x1f;

/// The first outcome's message, and the further bugs appended after it.
fn split_bugs(area: &[u8]) -> Result<(String, Vec<Outcome>), BufferError> {
    let mut parts = area.split(|&b| b == MORE_BUG);
    let first = String::from_utf8_lossy(parts.next().unwrap_or_default()).into_owned();
    let mut more = Vec::new();
    for part in parts {
        let (head, message) = match part.iter().position(|&b| b == MORE_BUG_MESSAGE) {
            Some(i) => (&part[..i], &part[i + 1..]),
            None => return Err(corrupt("a further bug without its message")),
        };
        let (&code, digits) = head.split_first().ok_or_else(|| corrupt("an empty further bug"))?;
        let value: i64 = std::str::from_utf8(digits).ok().and_then(|d| d.parse().ok()).ok_or_else(|| corrupt("a further bug's value"))?;
        more.push(match code {
            b'v' => Outcome::Violation {
                kind: crate::abi::violation_kind(value as u32).ok_or_else(|| corrupt("bad violation kind"))?,
                message: String::from_utf8_lossy(message).into_owned(),
            },
            b's' => Outcome::Signal(value as i32),
            _ => return Err(corrupt("a further bug of unknown kind")),
        });
    }
    Ok((first, more))
}

/// What the executor reads back.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Execution {
    pub threads: Vec<ThreadInfo>,
    pub events: Vec<Event>,
    pub steps: Vec<Step>,
    /// Per step, when its decision was made: µs of the execution's running time since `main`
    /// (what re-running the prefix up to that step costs).
    pub step_micros: Vec<u32>,
    /// At a deadlock: what every blocked thread was waiting to perform.
    pub blocked: Vec<PendingOp>,
    /// Violations and crashes of other threads after the first (which is `outcome`).
    pub more_bugs: Vec<Outcome>,
    /// `None` while the child reported nothing (it died before saying how it ended).
    pub outcome: Option<Outcome>,
    /// An internal limit was hit or the program did something EXPLORE does not support.
    pub tool_error: Option<String>,
}

#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum BufferError {
    #[error("explore buffer: {0}")]
    Corrupt(String),
}

fn corrupt(m: impl Into<String>) -> BufferError {
    BufferError::Corrupt(m.into())
}

fn mask_threads(mask: u64) -> Vec<ThreadId> {
    (0..64).filter(|i| mask & (1u64 << i) != 0).map(ThreadId).collect()
}

/// Decode and validate a buffer written by [`BufferWriter`].
pub fn read(b: &[u8]) -> Result<Execution, BufferError> {
    if b.len() < HEADER || get64(b, MAGIC) != BUFFER_MAGIC {
        return Err(corrupt("bad magic"));
    }
    if get32(b, VERSION) != BUFFER_VERSION {
        return Err(corrupt(format!("version {} (expected {BUFFER_VERSION})", get32(b, VERSION))));
    }
    let cap = Capacity { events: get32(b, CAP_EVENTS), steps: get32(b, CAP_STEPS), enabled: get32(b, CAP_ENABLED) };
    if cap.bytes() > b.len() {
        return Err(corrupt("capacities exceed the buffer"));
    }
    let (ne, ns, nen, nt) = (get32(b, N_EVENTS), get32(b, N_STEPS), get32(b, N_ENABLED), get32(b, N_THREADS));
    if ne > cap.events || ns > cap.steps || nen > cap.enabled || nt as usize > MAX_THREADS {
        return Err(corrupt("counts exceed capacities"));
    }
    let mut threads = Vec::new();
    for t in 0..nt {
        let at = THREADS_AT + t as usize * THREAD_RECORD;
        let parent = get32(b, at);
        let parent = (parent != u32::MAX).then_some(ThreadId(parent));
        if parent.is_some_and(|p| p.0 >= t) || (t > 0 && parent.is_none()) {
            return Err(corrupt(format!("thread {t} has an impossible parent")));
        }
        threads.push(ThreadInfo { id: ThreadId(t), parent, nth_child: get32(b, at + 4) });
    }
    let valid_tid = |tid: u32| if tid < nt { Ok(ThreadId(tid)) } else { Err(corrupt(format!("unknown thread {tid}"))) };
    let mut events = Vec::with_capacity(ne as usize);
    for i in 0..ne as usize {
        let (op, k) = OpRecord::get(b, HEADER + i * EVENT).ok_or_else(|| corrupt(format!("event {i}: bad kind")))?;
        events.push(Event { tid: valid_tid(op.tid)?, k, site: op.site, kind: op.kind, object: op.kind.object(op.addr, op.size, op.logical) });
    }
    let steps_at = HEADER + cap.events as usize * EVENT;
    let enabled_at = steps_at + cap.steps as usize * STEP;
    let mut steps = Vec::with_capacity(ns as usize);
    let mut step_micros = Vec::with_capacity(ns as usize);
    let mut blocked = Vec::new();
    for i in 0..ns as usize {
        let at = steps_at + i * STEP;
        let (chosen, first, n, first_event) = (get32(b, at), get32(b, at + 4), get32(b, at + 8), get32(b, at + 12));
        let pseudo = chosen == BLOCKED_STEP && i + 1 == ns as usize;
        // Equal first events: the earlier step's thread crashed performing it (no event).
        if first_event > ne || (!pseudo && steps.last().is_some_and(|p: &Step| p.first_event > first_event)) {
            return Err(corrupt(format!("step {i}: its first event is out of order")));
        }
        if first.checked_add(n).is_none_or(|end| end > nen) {
            return Err(corrupt(format!("step {i}: enabled records out of range")));
        }
        let mut enabled = Vec::with_capacity(n as usize);
        for j in first..first + n {
            let (op, _) = OpRecord::get(b, enabled_at + j as usize * ENABLED).ok_or_else(|| corrupt(format!("step {i}: bad kind")))?;
            valid_tid(op.tid)?;
            enabled.push(op.pending());
        }
        if pseudo {
            blocked = enabled;
        } else {
            steps.push(Step { chosen: valid_tid(chosen)?, enabled, first_event });
            step_micros.push(get32(b, at + 16));
        }
    }
    let (first_message, more_bugs) = {
        let n = (get32(b, MESSAGE_BYTES) as usize).min(MESSAGE_LEN);
        split_bugs(&b[MESSAGE..MESSAGE + n])?
    };
    let message = || first_message.clone();
    let value = get32(b, OUTCOME_VALUE) as i32;
    let mut tool_error = None;
    let outcome = match get32(b, OUTCOME) {
        code::RUNNING => None,
        code::EXIT => Some(Outcome::Exit(value)),
        code::VIOLATION => Some(Outcome::Violation {
            kind: crate::abi::violation_kind(value as u32).ok_or_else(|| corrupt("bad violation kind"))?,
            message: message(),
        }),
        code::SIGNAL => Some(Outcome::Signal(value)),
        code::DEADLOCK => Some(Outcome::Deadlock { waiting: message().split("; ").map(String::from).collect() }),
        code::INFEASIBLE => Some(Outcome::Infeasible {
            step: get32(b, INFEASIBLE_STEP),
            requested: ThreadId(get32(b, INFEASIBLE_THREAD)),
            enabled: mask_threads(get64(b, INFEASIBLE_ENABLED)),
        }),
        code::OVERFLOW => Some(Outcome::EventLimit { events: ne }),
        code::UNSUPPORTED => {
            tool_error = Some(message());
            None
        }
        c => return Err(corrupt(format!("bad outcome code {c}"))),
    };
    Ok(Execution { threads, events, steps, step_micros, blocked, more_bugs, outcome, tool_error })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::access_kind::AccessKind;

    fn op(tid: u32, kind: EventKind, addr: u64) -> OpRecord {
        OpRecord { tid, kind, site: Some(SiteId(7)), addr, size: 4, logical: None }
    }

    #[test]
    fn round_trip_and_validation() {
        let cap = Capacity { events: 4, steps: 4, enabled: 8 };
        let mut b = vec![0u8; cap.bytes()];
        {
            let mut w = BufferWriter::init(&mut b, cap).unwrap();
            assert!(w.thread(0, None, 0) && w.thread(1, Some(0), 0));
            let store = op(0, EventKind::Access(AccessKind::Store), 0x10);
            assert!(w.step(0, &[store], 5));
            assert!(w.event(&store, 0));
            assert!(w.step(1, &[op(0, EventKind::Lock, 0x20), op(1, EventKind::Create, 1)], 9));
            assert!(w.event(&op(1, EventKind::Create, 1), 0));
            for _ in 0..2 {
                w.event(&store, 1);
            }
            assert!(!w.event(&store, 3), "full");
            w.outcome(ChildOutcome::Deadlock("T0 waits for lock 0x20; T1 waits for join T0"));
            w.outcome(ChildOutcome::Exit(0));
        }
        let e = read(&b).unwrap();
        assert_eq!(e.threads.len(), 2);
        assert_eq!(e.events.len(), 4);
        assert_eq!(e.steps[1].enabled[1].object, crate::ObjectRef::Thread(ThreadId(1)));
        assert_eq!(e.step_micros, [5, 9]);
        assert_eq!(e.outcome, Some(Outcome::Deadlock { waiting: vec!["T0 waits for lock 0x20".into(), "T1 waits for join T0".into()] }));

        let mut bad = b.clone();
        bad[N_EVENTS] = 200;
        assert!(read(&bad).is_err());
        let mut bad = b.clone();
        bad[0] ^= 1;
        assert!(read(&bad).is_err());
        let mut bad = b.clone();
        bad[HEADER + 16] = 99; // event kind
        assert!(read(&bad).is_err());
        let mut bad = b.clone();
        bad[HEADER + 32] = 7; // logical address tag
        assert!(read(&bad).is_err());
        let mut bad = b.clone();
        bad[HEADER] = 9; // event of an unknown thread
        assert!(read(&bad).is_err());
        assert!(read(&b[..100]).is_err());
    }
}
