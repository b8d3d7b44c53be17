//! The shared-memory buffer an EXPLORE child writes its execution into (DESIGN §7).
//!
//! The executor creates it (a memfd) and the fork server's children inherit it. A child writes
//! fixed-size little-endian records as things happen, so nothing is lost when it crashes, and
//! allocates nothing while doing so. Every record is written before the count that covers it
//! is published (a release store), so the executor can decode the execution while it runs
//! ([`Reader::advance`], acquire loads) and the verifier walk it meanwhile on the other core;
//! [`Reader::finish`] decodes the rest once the child ended. Every count and code is checked
//! before use: a corrupt buffer is an error, never a wrong trace.
//!
//! Layout: a header (magic, version, capacities, counts, outcome, message, thread table, the
//! live word), then the event records, the step records and the enabled-operation records. The
//! live word tells whose the header is: the executor clears it before it asks for a run, and
//! the child sets it once it has reset the header for that run.

use crate::le::{get32, get64, put32, put64};
use crate::event::{Event, EventKind, PendingOp, Step};
use crate::ids::{SiteId, ThreadId};
use crate::logical_addr::LogicalAddr;
use crate::outcome::{Outcome, ViolationKind};
use crate::trace::ThreadInfo;
use crate::operand::{raw, Operand, Valued, Value};
use std::sync::atomic::{AtomicU32, Ordering};

/// The header word at `at` of the buffer at `base` (`len` bytes) as an atomic: the counts and the
/// live word are written by the child and read by the executor while the child runs.
fn word<'b>(base: *mut u8, len: usize, at: usize) -> &'b AtomicU32 {
    assert!(at + 4 <= len && (base as usize + at) % 4 == 0, "a header word out of place");
    // SAFETY: in bounds and aligned (checked above), in a buffer that outlives the caller's
    // borrow of it: a writable shared mapping (in tests, our own memory). While another process
    // may access a word, both access it only atomically; `base` comes from a `&mut` wherever
    // the word is stored to.
    unsafe { AtomicU32::from_ptr(base.add(at).cast::<u32>()) }
}

/// Publish a count: release, so that a reader that sees it (acquire) sees the records it covers.
fn publish(b: &mut [u8], at: usize, v: u32) {
    word(b.as_mut_ptr(), b.len(), at).store(v.to_le(), Ordering::Release);
}

/// A count the child published (acquire: the records it covers are visible).
fn published(b: &[u8], at: usize) -> u32 {
    // Only loaded through the shared borrow.
    u32::from_le(word(b.as_ptr().cast_mut(), b.len(), at).load(Ordering::Acquire))
}

/// Mark the buffer as holding no run (the executor, before it asks for one). Relaxed: the
/// request that follows goes through a pipe, which orders this store before the child's.
pub fn clear_live(b: &mut [u8]) {
    if b.len() >= HEADER {
        word(b.as_mut_ptr(), b.len(), LIVE).store(0, Ordering::Relaxed);
    }
}

pub const BUFFER_MAGIC: u64 = u64::from_le_bytes(*b"IRSXPLR1");
pub const BUFFER_VERSION: u32 = 5;
/// Logical threads one execution may have (the enabled set of a step is a 64-bit mask).
pub const MAX_THREADS: usize = 64;
/// The `chosen` of a last, pseudo step that lists the operations the threads left blocked at a
/// deadlock were waiting to perform.
pub const BLOCKED_STEP: u32 = u32::MAX;
pub const MESSAGE_LEN: usize = 1024;

const HEADER: usize = 4096;
const THREADS_AT: usize = MESSAGE + MESSAGE_LEN; // the fixed fields, the message, then the thread table
const THREAD_RECORD: usize = 16;
/// 1 once the child has set the header up for the run the executor asked for (see the module
/// doc); 0 before.
const LIVE: usize = THREADS_AT + MAX_THREADS * THREAD_RECORD;
const EVENT: usize = 104;
const STEP: usize = 24;
const ENABLED: usize = 104;

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
    pub const DISCARDED: u32 = 8;
    pub const THREAD_BOUND: u32 = 9;
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
/// How many steps [`BufferWriter::mark_read_only`] has flagged (the reader re-reads the flags
/// at the end when there are any).
const READ_ONLY_STEPS: usize = 68;
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
    /// The operand of a store or an update (`crate::value_model`).
    pub value: Option<Valued>,
}

/// A value as 24 bytes at `at`: its logical address's raw encoding.
fn put_value(b: &mut [u8], at: usize, v: Value) {
    let (tag, thread, alloc, offset) = v.to_raw();
    put32(b, at, tag);
    put32(b, at + 4, thread);
    put32(b, at + 8, alloc);
    put64(b, at + 16, offset);
}

fn get_value(b: &[u8], at: usize) -> Option<Value> {
    LogicalAddr::from_raw(get32(b, at), get32(b, at + 4), get32(b, at + 8), get64(b, at + 16)).ok().flatten()
}

/// An operand into the record at `at` (out of line: most records have none): its code (0 is
/// none; bit 8 says the update changed memory), its first value, and a compare-exchange's
/// second (only then written, and read).
#[inline(never)]
fn put_operand(b: &mut [u8], at: usize, v: Valued) {
    let (code, x) = match v.operand {
        Operand::Store(x) => (1, x),
        Operand::Cas { expected, desired } => {
            put_value(b, at + 80, desired);
            (2, expected)
        }
        Operand::Xchg(x) => (3, x),
        Operand::Add(d) => (4, raw(d)),
        Operand::Sub(d) => (5, raw(d)),
    };
    put32(b, at + 44, code | (v.changed as u32) << 8);
    put_value(b, at + 56, x);
}

/// The operand [`put_operand`] wrote at `at` (code `code`, not 0); `None` for a code or value no
/// writer emits.
fn get_operand(b: &[u8], at: usize, code: u32) -> Option<Valued> {
    let a = get_value(b, at + 56)?;
    let operand = match code & 0xff {
        1 => Operand::Store(a),
        2 => Operand::Cas { expected: a, desired: get_value(b, at + 80)? },
        3 => Operand::Xchg(a),
        4 => Operand::Add(a.offset),
        5 => Operand::Sub(a.offset),
        _ => return None,
    };
    Some(Valued { operand, changed: code & 0x100 != 0 })
}

impl OpRecord {
    /// `stored`: keep a store's value (an event, or a cut-off thread's next operation, which the
    /// exploration may make an event of); an enabled operation's record leaves it out (the
    /// exploration needs an update's operands there, to label it, but no store's).
    fn put(&self, b: &mut [u8], at: usize, k: u32, stored: bool) {
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
        // The operand's values only where there is one (most records have none): the reader
        // reads them only then.
        match self.value {
            Some(v) if stored || !matches!(v.operand, Operand::Store(_)) => put_operand(b, at, v),
            _ => put32(b, at + 44, 0),
        }
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
                value: match get32(b, at + 44) {
                    0 => None,
                    code => Some(get_operand(b, at, code)?),
                },
            },
            get32(b, at + 4),
        ))
    }

    fn pending(&self) -> PendingOp {
        PendingOp { tid: ThreadId(self.tid), site: self.site, kind: self.kind, object: self.kind.object(self.addr, self.size, self.logical), value: self.value }
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
    /// The outcome so far, its value and the length of its message: a thread may have failed
    /// before the pause (it halts, the others go on), and every continuation has that failure.
    outcome: [u32; 3],
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
    /// A thread's `__VERIFIER_assume` failed: the execution is one the program rules out.
    Discarded,
    /// A thread was about to create more threads than `--max-threads` lets each thread create
    /// (the value): the process ended there.
    ThreadBound(u32),
}

impl<'a> BufferWriter<'a> {
    /// Start a new execution in `b` (at least `cap.bytes()` long).
    pub fn init(b: &'a mut [u8], cap: Capacity) -> Option<BufferWriter<'a>> {
        if b.len() < cap.bytes() {
            return None;
        }
        // The live word is left to the atomic store below: the executor may be reading it.
        b[..LIVE].fill(0);
        b[LIVE + 4..HEADER].fill(0);
        put64(b, MAGIC, BUFFER_MAGIC);
        put32(b, VERSION, BUFFER_VERSION);
        put32(b, CAP_EVENTS, cap.events);
        put32(b, CAP_STEPS, cap.steps);
        put32(b, CAP_ENABLED, cap.enabled);
        publish(b, LIVE, 1);
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
        Mark {
            n: [get32(self.b, N_EVENTS), get32(self.b, N_STEPS), get32(self.b, N_ENABLED), get32(self.b, N_THREADS)],
            outcome: [get32(self.b, OUTCOME), get32(self.b, OUTCOME_VALUE), get32(self.b, MESSAGE_BYTES)],
        }
    }

    /// Back to `mark`, with the outcome it had (no outcome yet, or a failure before it): how a
    /// continuation from a snapshot starts. (A message written before the mark is left in
    /// place: a later failure only appends after it.)
    pub fn reset_to(&mut self, mark: Mark) {
        for (field, v) in [N_EVENTS, N_STEPS, N_ENABLED, N_THREADS].into_iter().zip(mark.n) {
            publish(self.b, field, v);
        }
        put32(self.b, OUTCOME, mark.outcome[0]);
        put32(self.b, OUTCOME_VALUE, mark.outcome[1]);
        put32(self.b, MESSAGE_BYTES, mark.outcome[2]);
        publish(self.b, LIVE, 1);
    }

    /// Register logical thread `tid` (dense, in creation order).
    pub fn thread(&mut self, tid: u32, parent: Option<u32>, nth_child: u32) -> bool {
        if tid as usize >= MAX_THREADS {
            return false;
        }
        let at = THREADS_AT + tid as usize * THREAD_RECORD;
        put32(self.b, at, parent.unwrap_or(u32::MAX));
        put32(self.b, at + 4, nth_child);
        let n = get32(self.b, N_THREADS).max(tid + 1);
        publish(self.b, N_THREADS, n);
        true
    }

    pub fn event(&mut self, op: &OpRecord, k: u32) -> bool {
        let n = get32(self.b, N_EVENTS);
        if n >= self.cap.events {
            return false;
        }
        let at = self.events_at() + n as usize * EVENT;
        op.put(self.b, at, k, true);
        publish(self.b, N_EVENTS, n + 1);
        true
    }

    /// A decision: the thread chosen, the enabled operations, and when (µs of the execution's
    /// running time since `main`, counted across the pauses of snapshots).
    pub fn step(&mut self, chosen: u32, enabled: &[OpRecord], micros: u32) -> bool {
        self.step_with(chosen, enabled.iter(), micros, None, 0)
    }

    /// [`step`](Self::step) with, for a `Kill`, what the killed thread was about to do (`cut`,
    /// kept as one more operation record after the enabled ones), and for a nondet call the
    /// value it takes (`choice`).
    /// The enabled operations are read where they are (no copy: the runtime writes a step at
    /// every decision).
    pub fn step_with<'o>(&mut self, chosen: u32, enabled: impl ExactSizeIterator<Item = &'o OpRecord>, micros: u32, cut: Option<&'o OpRecord>, choice: u32) -> bool {
        let (ns, ne) = (get32(self.b, N_STEPS), get32(self.b, N_ENABLED));
        let records = enabled.len() + cut.is_some() as usize;
        if ns >= self.cap.steps || ne as usize + records > self.cap.enabled as usize {
            return false;
        }
        let at = self.steps_at() + ns as usize * STEP;
        put32(self.b, at, chosen);
        put32(self.b, at + 4, ne);
        let n = enabled.len();
        put32(self.b, at + 8, n as u32);
        put32(self.b, at + 12, get32(self.b, N_EVENTS));
        put32(self.b, at + 16, micros);
        put32(self.b, at + 20, cut.is_some() as u32 | choice << 16);
        for (i, op) in enabled.enumerate() {
            op.put(self.b, self.enabled_at() + (ne as usize + i) * ENABLED, 0, false);
        }
        if let Some(op) = cut {
            op.put(self.b, self.enabled_at() + (ne as usize + n) * ENABLED, 0, true);
        }
        // The enabled count first: a reader that sees the step sees its records counted.
        publish(self.b, N_ENABLED, ne + records as u32);
        publish(self.b, N_STEPS, ns + 1);
        true
    }

    /// Flag the steps of `thread` from step `from` on as a read-only iteration of a watched loop
    /// (`Policy::Anchor`: an execution that keeps them can leave them out, see `Step::read_only`).
    pub fn mark_read_only(&mut self, thread: u32, from: u32) {
        let ns = get32(self.b, N_STEPS);
        let mut marked = get32(self.b, READ_ONLY_STEPS);
        for i in from..ns {
            let at = self.steps_at() + i as usize * STEP;
            if get32(self.b, at) == thread {
                put32(self.b, at + 20, get32(self.b, at + 20) | 2);
                marked += 1;
            }
        }
        put32(self.b, READ_ONLY_STEPS, marked);
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
            ChildOutcome::Discarded => (code::DISCARDED, 0),
            ChildOutcome::ThreadBound(n) => (code::THREAD_BOUND, n as i32),
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
#[derive(Clone, Debug, Default, PartialEq, Eq)]
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

/// Decode and validate a buffer written by [`BufferWriter`] whose execution has ended.
pub fn read(b: &[u8]) -> Result<Execution, BufferError> {
    let mut x = Execution::default();
    Reader::default().finish(b, &mut x)?;
    Ok(x)
}

/// Event record `i` (published; `nt` threads known).
fn decode_event(b: &[u8], i: usize, nt: u32) -> Result<Event, BufferError> {
    let (op, k) = OpRecord::get(b, HEADER + i * EVENT).ok_or_else(|| corrupt(format!("event {i}: bad kind")))?;
    if op.tid >= nt {
        return Err(corrupt(format!("unknown thread {}", op.tid)));
    }
    Ok(Event { tid: ThreadId(op.tid), k, site: op.site, kind: op.kind, object: op.kind.object(op.addr, op.size, op.logical), value: op.value })
}

/// Append the `n` enabled-operation records from `first` (of step `step`, whose range is
/// checked already) to `into`, checking each (`nt` threads known).
fn decode_enabled(b: &[u8], cap: Capacity, step: usize, first: u32, n: u32, nt: u32, into: &mut Vec<PendingOp>) -> Result<(), BufferError> {
    let enabled_at = HEADER + cap.events as usize * EVENT + cap.steps as usize * STEP;
    for j in first..first + n {
        let (op, _) = OpRecord::get(b, enabled_at + j as usize * ENABLED).ok_or_else(|| corrupt(format!("step {step}: bad kind")))?;
        if op.tid >= nt {
            return Err(corrupt(format!("unknown thread {}", op.tid)));
        }
        into.push(op.pending());
    }
    Ok(())
}

/// Decodes a buffer while its execution writes it, and once it has ended, each record once
/// (appending to an [`Execution`]). Until the child has set the buffer up for the run (the live
/// word), nothing is read: the header may still be an earlier run's.
#[derive(Debug, Default)]
pub struct Reader {
    /// Enabled lists are left empty, decoded on demand (see [`Reader::on_demand`]): where each
    /// step's are, `(first record, count)`.
    on_demand: Option<Vec<(u32, u32)>>,
    /// Threads and events published at the last look.
    threads: u32,
    events: u32,
    cap: Option<Capacity>,
    /// Step records read (the pseudo step of a deadlock included).
    steps: u32,
    /// The pseudo step was read: nothing may follow it.
    blocked: bool,
    /// Empty vectors for enabled lists (from executions the caller is done with).
    pool: Vec<Vec<PendingOp>>,
}

impl Reader {
    /// A reader that leaves the events and every step's enabled list out and decodes them only
    /// when asked ([`events`](Self::events), [`enabled`](Self::enabled)): a walk over a run
    /// needs the events of the steps it walks, not of the prefix it knows, and few enabled
    /// lists (the threads left blocked at a deadlock are decoded as usual).
    pub fn on_demand() -> Reader {
        Reader { on_demand: Some(Vec::new()), ..Reader::default() }
    }

    /// How many events the execution has (read so far).
    pub fn event_count(&self, x: &Execution) -> usize {
        if self.on_demand.is_some() { self.events as usize } else { x.events.len() }
    }

    /// Events `range` (read so far) appended to `out`, decoded from the buffer `b` (still this
    /// run's) when this reader leaves them to demand.
    pub fn events(&self, b: &[u8], x: &Execution, range: std::ops::Range<usize>, out: &mut Vec<Event>) -> Result<(), BufferError> {
        if self.on_demand.is_none() {
            out.extend_from_slice(&x.events[range]);
            return Ok(());
        }
        assert!(range.end <= self.events as usize, "events not published yet");
        for i in range {
            out.push(decode_event(b, i, self.threads)?);
        }
        Ok(())
    }

    /// How many operations were enabled at step `s` (read so far).
    pub fn enabled_len(&self, x: &Execution, s: usize) -> usize {
        match &self.on_demand {
            Some(at) => at[s].1 as usize,
            None => x.steps[s].enabled.len(),
        }
    }

    /// The operations enabled at step `s` (read so far), decoded from the buffer `b` (still
    /// this run's) when this reader leaves them to demand.
    pub fn enabled(&self, b: &[u8], x: &Execution, s: usize) -> Result<Vec<PendingOp>, BufferError> {
        let (Some(at), Some(cap)) = (&self.on_demand, self.cap) else { return Ok(x.steps[s].enabled.clone()) };
        let (first, n) = at[s];
        let mut ops = Vec::with_capacity(n as usize);
        decode_enabled(b, cap, s, first, n, self.threads, &mut ops)?;
        Ok(ops)
    }

    /// Take the enabled lists' vectors from `pool` (emptied ones of an earlier execution)
    /// instead of allocating them, and an on-demand reader's index of them from `at` (another
    /// reader ignores it).
    pub fn reusing(mut self, pool: Vec<Vec<PendingOp>>, mut at: Vec<(u32, u32)>) -> Reader {
        self.pool = pool;
        if let Some(v) = &mut self.on_demand {
            at.clear();
            *v = at;
        }
        self
    }

    /// What is left of the pool, and an on-demand reader's index (to pass to the next
    /// reader's [`reusing`](Self::reusing)).
    pub fn into_pool(self) -> (Vec<Vec<PendingOp>>, Option<Vec<(u32, u32)>>) {
        (self.pool, self.on_demand)
    }

    /// The capacities, once the child has set the header up (checked then, once).
    fn header(&mut self, b: &[u8]) -> Result<Option<Capacity>, BufferError> {
        if let Some(cap) = self.cap {
            return Ok(Some(cap));
        }
        if b.len() < HEADER {
            return Err(corrupt("bad magic"));
        }
        if published(b, LIVE) != 1 {
            return Ok(None);
        }
        if get64(b, MAGIC) != BUFFER_MAGIC {
            return Err(corrupt("bad magic"));
        }
        if get32(b, VERSION) != BUFFER_VERSION {
            return Err(corrupt(format!("version {} (expected {BUFFER_VERSION})", get32(b, VERSION))));
        }
        let cap = Capacity { events: get32(b, CAP_EVENTS), steps: get32(b, CAP_STEPS), enabled: get32(b, CAP_ENABLED) };
        if cap.bytes() > b.len() {
            return Err(corrupt("capacities exceed the buffer"));
        }
        self.cap = Some(cap);
        Ok(Some(cap))
    }

    /// Decode what the child has published since the last call into `x`; whether a step was
    /// new. A step's events are complete once the next step is there (or the run has ended).
    pub fn advance(&mut self, b: &[u8], x: &mut Execution) -> Result<bool, BufferError> {
        let Some(cap) = self.header(b)? else { return Ok(false) };
        // Steps first, then what they refer to: every count only grows and is published after
        // the records it covers, so the later loads cover whatever the steps refer to.
        let ns = published(b, N_STEPS);
        let nen = published(b, N_ENABLED);
        let ne = published(b, N_EVENTS);
        let nt = published(b, N_THREADS);
        if ne > cap.events || ns > cap.steps || nen > cap.enabled || nt as usize > MAX_THREADS {
            return Err(corrupt("counts exceed capacities"));
        }
        for t in x.threads.len() as u32..nt {
            let at = THREADS_AT + t as usize * THREAD_RECORD;
            let parent = get32(b, at);
            let parent = (parent != u32::MAX).then_some(ThreadId(parent));
            if parent.is_some_and(|p| p.0 >= t) || (t > 0 && parent.is_none()) {
                return Err(corrupt(format!("thread {t} has an impossible parent")));
            }
            x.threads.push(ThreadInfo { id: ThreadId(t), parent, nth_child: get32(b, at + 4) });
        }
        let valid_tid = |tid: u32| if tid < nt { Ok(ThreadId(tid)) } else { Err(corrupt(format!("unknown thread {tid}"))) };
        if self.on_demand.is_none() {
            x.events.reserve((ne as usize).saturating_sub(x.events.len()));
            for i in x.events.len()..ne as usize {
                x.events.push(decode_event(b, i, nt)?);
            }
        }
        let steps_at = HEADER + cap.events as usize * EVENT;
        let before = self.steps;
        for i in before as usize..ns as usize {
            let at = steps_at + i * STEP;
            let (chosen, first, n, first_event) = (get32(b, at), get32(b, at + 4), get32(b, at + 8), get32(b, at + 12));
            let flags = get32(b, at + 20);
            if flags & 0xfffc != 0 {
                return Err(corrupt(format!("step {i}: bad flags")));
            }
            let (has_cut, read_only, choice) = (flags & 1 != 0, flags & 2 != 0, flags >> 16);
            if self.blocked {
                return Err(corrupt(format!("step {i} follows the blocked threads' step")));
            }
            let pseudo = chosen == BLOCKED_STEP;
            // Equal first events: the earlier step's thread crashed performing it (no event).
            if first_event > ne || (!pseudo && x.steps.last().is_some_and(|p: &Step| p.first_event > first_event)) {
                return Err(corrupt(format!("step {i}: its first event is out of order")));
            }
            if first.checked_add(n + has_cut as u32).is_none_or(|end| end > nen) {
                return Err(corrupt(format!("step {i}: enabled records out of range")));
            }
            let mut cut = Vec::new();
            if has_cut {
                decode_enabled(b, cap, i, first + n, 1, nt, &mut cut)?;
            }
            let mut enabled = Vec::new();
            match &mut self.on_demand {
                Some(at) if !pseudo => at.push((first, n)),
                _ => {
                    if n > 0 {
                        enabled = self.pool.pop().unwrap_or_default();
                    }
                    decode_enabled(b, cap, i, first, n, nt, &mut enabled)?;
                }
            }
            if pseudo {
                x.blocked = enabled;
                self.blocked = true;
            } else {
                x.steps.push(Step { chosen: valid_tid(chosen)?, enabled, first_event, cut: cut.pop(), choice, read_only });
                x.step_micros.push(get32(b, at + 16));
            }
        }
        self.steps = ns;
        self.threads = nt;
        self.events = ne;
        Ok(ns > before)
    }

    /// The execution has ended (its writer is gone): decode the rest into `x`, and how it
    /// ended. A child that never set the buffer up leaves `x` as it is, with no outcome.
    pub fn finish(&mut self, b: &[u8], x: &mut Execution) -> Result<(), BufferError> {
        if self.header(b)?.is_none() {
            return Ok(());
        }
        self.advance(b, x)?;
        if get32(b, READ_ONLY_STEPS) > 0 {
            // Flags set after the step was read (the walk behind the execution reads early).
            let steps_at = HEADER + get32(b, CAP_EVENTS) as usize * EVENT;
            for (i, s) in x.steps.iter_mut().enumerate() {
                s.read_only = get32(b, steps_at + i * STEP + 20) & 2 != 0;
            }
        }
        let (first_message, more_bugs) = {
            let n = (get32(b, MESSAGE_BYTES) as usize).min(MESSAGE_LEN);
            split_bugs(&b[MESSAGE..MESSAGE + n])?
        };
        x.more_bugs = more_bugs;
        let message = || first_message.clone();
        let value = get32(b, OUTCOME_VALUE) as i32;
        x.outcome = match get32(b, OUTCOME) {
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
            // The limit, not how many events were written when a record of some kind ran out: one
            // number for every execution that reaches it (and one bug class).
            code::OVERFLOW => Some(Outcome::EventLimit { events: self.cap.map_or(self.events, |c| c.events) }),
            code::DISCARDED => Some(Outcome::Discarded),
            code::THREAD_BOUND => Some(Outcome::ThreadBound { max: value as u32 }),
            code::UNSUPPORTED => {
                x.tool_error = Some(message());
                None
            }
            c => return Err(corrupt(format!("bad outcome code {c}"))),
        };
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::access_kind::AccessKind;

    fn op(tid: u32, kind: EventKind, addr: u64) -> OpRecord {
        OpRecord { tid, kind, site: Some(SiteId(7)), addr, size: 4, logical: None, value: None }
    }

    /// A buffer of `n` bytes, aligned as a mapping is (the header words are atomics).
    #[derive(Clone)]
    struct Aligned(Vec<u64>, usize);
    impl Aligned {
        fn new(n: usize) -> Aligned {
            Aligned(vec![0; n.div_ceil(8)], n)
        }
        fn bytes(&self) -> &[u8] {
            // SAFETY: the vector's own memory, `self.1 <= 8 * len` bytes of it.
            unsafe { std::slice::from_raw_parts(self.0.as_ptr().cast(), self.1) }
        }
        fn bytes_mut(&mut self) -> &mut [u8] {
            // SAFETY: as above, borrowed mutably.
            unsafe { std::slice::from_raw_parts_mut(self.0.as_mut_ptr().cast(), self.1) }
        }
    }

    #[test]
    fn round_trip_and_validation() {
        let cap = Capacity { events: 4, steps: 4, enabled: 8 };
        let mut buf = Aligned::new(cap.bytes());
        {
            let mut w = BufferWriter::init(buf.bytes_mut(), cap).unwrap();
            assert!(w.thread(0, None, 0) && w.thread(1, Some(0), 0));
            let heap = LogicalAddr { region: crate::Region::Heap { thread: ThreadId(1), alloc: 2 }, offset: 8 };
            let store = OpRecord { value: Some(Valued { operand: Operand::Store(heap), changed: false }), ..op(0, EventKind::Access(AccessKind::Store), 0x10) };
            assert!(w.step(0, &[store], 5));
            assert!(w.event(&store, 0));
            assert!(w.step(1, &[op(0, EventKind::Lock, 0x20), op(1, EventKind::Create, 1)], 9));
            assert!(w.event(&op(1, EventKind::Create, 1), 0));
            let cas = Operand::Cas { expected: raw(3), desired: heap };
            w.event(&OpRecord { value: Some(Valued { operand: cas, changed: true }), ..op(1, EventKind::Access(AccessKind::CmpXchg), 0x10) }, 1);
            w.event(&store, 1);
            assert!(!w.event(&store, 3), "full");
            w.outcome(ChildOutcome::Deadlock("T0 waits for lock 0x20; T1 waits for join T0"));
            w.outcome(ChildOutcome::Exit(0));
        }
        let b = buf.bytes();
        let e = read(b).unwrap();
        assert_eq!(e.threads.len(), 2);
        assert_eq!(e.events.len(), 4);
        assert_eq!(e.steps[1].enabled[1].object, crate::ObjectRef::Thread(ThreadId(1)));
        assert_eq!(e.step_micros, [5, 9]);
        assert!(e.events[0].value.is_some());
        assert_eq!(e.steps[0].enabled[0].value, None, "an enabled store's value is left out");
        assert_eq!(e.events[2].value, Some(Valued { operand: Operand::Cas { expected: raw(3), desired: LogicalAddr { region: crate::Region::Heap { thread: ThreadId(1), alloc: 2 }, offset: 8 } }, changed: true }));
        assert_eq!(e.outcome, Some(Outcome::Deadlock { waiting: vec!["T0 waits for lock 0x20".into(), "T1 waits for join T0".into()] }));

        let corrupted = |at: usize, f: &dyn Fn(&mut u8)| {
            let mut bad = buf.clone();
            f(&mut bad.bytes_mut()[at]);
            read(bad.bytes())
        };
        assert!(corrupted(N_EVENTS, &|x| *x = 200).is_err());
        assert!(corrupted(0, &|x| *x ^= 1).is_err());
        assert!(corrupted(HEADER + 16, &|x| *x = 99).is_err(), "event kind");
        assert!(corrupted(HEADER + 32, &|x| *x = 7).is_err(), "logical address tag");
        assert!(corrupted(HEADER + 44, &|x| *x = 9).is_err(), "operand code");
        assert!(corrupted(HEADER + 56, &|x| *x = 9).is_err(), "operand value's tag");
        assert!(corrupted(HEADER, &|x| *x = 9).is_err(), "event of an unknown thread");
        assert!(read(&b[..100]).is_err());
    }

    /// The child's turn between the reader's: a writer over the buffer as it stands.
    fn child(buf: &mut Aligned, cap: Capacity, f: impl FnOnce(&mut BufferWriter)) {
        f(&mut BufferWriter { b: buf.bytes_mut(), cap })
    }

    #[test]
    fn a_reader_follows_the_writer_and_ignores_an_earlier_run() {
        let cap = Capacity { events: 8, steps: 8, enabled: 16 };
        let mut buf = Aligned::new(cap.bytes());
        let store = op(0, EventKind::Access(AccessKind::Store), 0x10);
        {
            // An earlier run, then the executor's claim for the next one.
            let mut w = BufferWriter::init(buf.bytes_mut(), cap).unwrap();
            w.thread(0, None, 0);
            w.step(0, &[store], 1);
            w.event(&store, 0);
        }
        clear_live(buf.bytes_mut());
        let (mut r, mut x) = (Reader::default(), Execution::default());
        assert!(!r.advance(buf.bytes(), &mut x).unwrap(), "not this run's yet");
        assert!(x.steps.is_empty() && x.threads.is_empty());

        BufferWriter::init(buf.bytes_mut(), cap).unwrap();
        assert!(!r.advance(buf.bytes(), &mut x).unwrap(), "live, but no step yet");
        child(&mut buf, cap, |w| {
            w.thread(0, None, 0);
            w.step(0, &[store], 1);
        });
        assert!(r.advance(buf.bytes(), &mut x).unwrap());
        assert_eq!((x.threads.len(), x.steps.len(), x.events.len()), (1, 1, 0));
        child(&mut buf, cap, |w| {
            w.event(&store, 0);
        });
        assert!(!r.advance(buf.bytes(), &mut x).unwrap(), "an event is not a step");
        assert_eq!(x.events.len(), 1);
        child(&mut buf, cap, |w| {
            w.step(0, &[store], 2);
            w.event(&store, 1);
            w.step(BLOCKED_STEP, &[op(0, EventKind::Lock, 0x20)], 3);
            w.outcome(ChildOutcome::Deadlock("T0 waits"));
        });
        r.finish(buf.bytes(), &mut x).unwrap();
        assert_eq!((x.steps.len(), x.events.len(), x.blocked.len()), (2, 2, 1));
        assert_eq!(x.step_micros, [1, 2]);
        assert!(matches!(x.outcome, Some(Outcome::Deadlock { .. })));
        assert_eq!(x, read(buf.bytes()).unwrap(), "read in pieces or at once, the same");
        // On demand: the same lists, decoded when asked.
        let (mut lazy, mut y) = (Reader::on_demand(), Execution::default());
        lazy.finish(buf.bytes(), &mut y).unwrap();
        assert!(y.steps.iter().all(|s| s.enabled.is_empty()) && y.blocked == x.blocked);
        assert!(y.events.is_empty() && lazy.event_count(&y) == x.events.len());
        let mut events = Vec::new();
        lazy.events(buf.bytes(), &y, 0..x.events.len(), &mut events).unwrap();
        assert_eq!(events, x.events);
        for s in 0..x.steps.len() {
            assert_eq!(lazy.enabled_len(&y, s), x.steps[s].enabled.len());
            assert_eq!(lazy.enabled(buf.bytes(), &y, s).unwrap(), x.steps[s].enabled);
        }
        // Nothing may follow the blocked threads' step.
        BufferWriter { b: buf.bytes_mut(), cap }.step(0, &[store], 4);
        assert!(read(buf.bytes()).is_err());
    }
}
