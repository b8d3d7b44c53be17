//! RECORD mode (DESIGN §3): one lock serialises every visible event, so the trace's
//! order is a real linearisation of the run and happens-before can be read off it exactly.
//!
//! A memory access holds the lock from its `before` callback to its `after` callback (the
//! access itself runs inside). Blocking operations never hold it while they block: a mutex
//! lock and a join are recorded right after they return; an unlock, a trylock and a thread
//! creation are recorded and performed under the lock. So the recorded order of lock events
//! is the order in which the mutex was really held, and a child's first event follows its
//! creation; a trylock that fails is recorded after the lock it met (`try_recorded`).

use crate::program::program_info::ProgramInfo;
use crate::thread::thread_state;
use parking_lot::{Mutex, MutexGuard};
use shared_proto::{Event, EventKind, ObjectRef, Outcome, SiteId, ThreadId, ThreadInfo, Trace};
use std::cell::Cell;
use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::OnceLock;
use std::time::Duration;

pub struct RecorderState {
    events: Vec<Event>,
    threads: Vec<ThreadInfo>,
    children: Vec<u32>,
    by_pthread: BTreeMap<u64, ThreadId>,
    /// Per thread: its exit is recorded (the process's end does not kill it).
    exited: Vec<bool>,
    violation: Option<Outcome>,
    closed: bool,
    /// The mutexes (program's, spin and internal) whose last recorded event took them: held as
    /// far as the trace says.
    held: Vec<u64>,
}

static RECORDER: Mutex<RecorderState> = Mutex::new(RecorderState {
    events: Vec::new(),
    threads: Vec::new(),
    children: Vec::new(),
    by_pthread: BTreeMap::new(),
    exited: Vec::new(),
    violation: None,
    closed: false,
    held: Vec::new(),
});

struct Config {
    path: PathBuf,
    argv: Vec<String>,
    program: ProgramInfo,
    pid: u32,
}

static CONFIG: OnceLock<Config> = OnceLock::new();

thread_local! {
    /// Whether the calling thread holds the recorder's lock between an access's `before` and
    /// `after` (its guard given up, see [`hold`]). A plain flag with no destructor: glibc's `exit`
    /// runs the calling thread's thread-local destructors *before* the exit handlers, and the
    /// handlers' accesses are recorded too (an `atexit` function called from a thread that
    /// calls `exit` found a destroyed guard cell and aborted the program).
    static HELD: Cell<bool> = const { Cell::new(false) };
}

/// Recording is on (RECORD mode, or alongside ENFORCE).
static ACTIVE: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

pub fn active() -> bool {
    // Relaxed: set at start-up before any other thread exists.
    ACTIVE.load(std::sync::atomic::Ordering::Relaxed)
}

/// Start recording: `main` becomes `T0`.
pub fn init(path: PathBuf, argv: Vec<String>, program: ProgramInfo) {
    ACTIVE.store(true, std::sync::atomic::Ordering::Relaxed);
    let _ = CONFIG.set(Config { path, argv, program, pid: std::process::id() });
    let mut r = RECORDER.lock();
    r.threads.push(ThreadInfo { id: ThreadId::MAIN, parent: None, nth_child: 0 });
    r.children.push(0);
    r.exited.push(false);
    drop(r);
    thread_state::register(ThreadId::MAIN);
}

pub fn lock() -> MutexGuard<'static, RecorderState> {
    RECORDER.lock()
}

/// How long a trylock's failure waits at most for the lock it met to be recorded (see
/// [`try_recorded`]).
const HOLDER_RECORD_WAIT: Duration = Duration::from_millis(100);

/// A trylock of the mutex at `addr`, made by `attempt` (true: taken) under the recorder's lock,
/// and recorded with its outcome (`TryLock` or `TryLockFail`, object `ObjectRef::Mutex`).
/// A lock is recorded right after it returns, so a trylock can fail on a mutex whose holder has
/// not recorded its lock yet; recorded then, the failure would come before that lock in the
/// trace, on a mutex free there, and a prefix made of the trace would let the trylock succeed
/// (found by chaos runs under such a prefix). So a failure on a mutex the trace shows free is
/// tried again, off the lock, until the holder's lock is recorded (at most
/// [`HOLDER_RECORD_WAIT`]; a holder that never records, which recorded threads do not do,
/// leaves the failure as it was).
/// Without recording, `attempt` alone.
pub fn try_recorded(site: Option<SiteId>, addr: u64, mut attempt: impl FnMut() -> bool) -> bool {
    if !active() {
        return attempt();
    }
    let until = std::time::Instant::now() + HOLDER_RECORD_WAIT;
    loop {
        let mut r = lock();
        let got = attempt();
        if !got && !r.held.contains(&addr) && std::time::Instant::now() < until {
            drop(r);
            std::thread::yield_now();
            continue;
        }
        r.push(site, if got { EventKind::TryLock } else { EventKind::TryLockFail }, ObjectRef::Mutex { addr, logical: None });
        return got;
    }
}

impl RecorderState {
    /// Append an event of the calling thread.
    pub fn push(&mut self, site: Option<SiteId>, kind: EventKind, object: ObjectRef) {
        if self.closed {
            return;
        }
        let Some(tid) = thread_state::current() else { return };
        let k = thread_state::next_k();
        if let ObjectRef::Mutex { addr, .. } = object {
            match kind {
                EventKind::Lock | EventKind::TryLock => self.held.push(addr),
                EventKind::Unlock => self.held.retain(|&a| a != addr),
                _ => {}
            }
        }
        self.events.push(Event { tid, k, site, kind, object, value: None });
    }

    /// Allocate the logical id of a thread the calling thread is about to create.
    pub fn new_child(&mut self) -> ThreadId {
        let parent = thread_state::current().unwrap_or(ThreadId::MAIN);
        let id = ThreadId(self.threads.len() as u32);
        let nth_child = self.children[parent.index()];
        self.children[parent.index()] += 1;
        self.threads.push(ThreadInfo { id, parent: Some(parent), nth_child });
        self.children.push(0);
        self.exited.push(false);
        id
    }

    /// Undo `new_child` when the creation failed.
    pub fn forget_child(&mut self, id: ThreadId) {
        if self.threads.last().map(|t| t.id) == Some(id) {
            let t = self.threads.pop().expect("checked");
            self.children.pop();
            self.exited.pop();
            if let Some(p) = t.parent {
                self.children[p.index()] -= 1;
            }
        }
    }

    pub fn bind_pthread(&mut self, handle: u64, id: ThreadId) {
        self.by_pthread.insert(handle, id);
    }

    pub fn thread_of(&self, handle: u64) -> Option<ThreadId> {
        self.by_pthread.get(&handle).copied()
    }

    /// Remember the first violation; it is the run's outcome whatever happens after.
    pub fn set_violation(&mut self, outcome: Outcome) {
        if self.violation.is_none() {
            self.violation = Some(outcome);
        }
    }

    fn snapshot(&self, outcome: Outcome) -> Option<(Trace, PathBuf)> {
        let c = CONFIG.get()?;
        if c.pid != std::process::id() {
            return None; // a forked child of the program: the trace belongs to the parent
        }
        Some((
            Trace {
                program_id: c.program.program_id,
                argv: c.argv.clone(),
                sites: std::sync::Arc::new(c.program.sites.clone()),
                globals: std::sync::Arc::new(c.program.globals.clone()),
                image: c.program.image,
                threads: self.threads.clone(),
                events: self.events.clone(),
                steps: Vec::new(),
                outcome: self.violation.clone().unwrap_or(outcome),
            },
            c.path.clone(),
        ))
    }
}

/// Open an access of the calling thread: the first open access takes the lock.
pub fn hold() {
    HELD.with(|h| {
        if !h.get() {
            // Locked until `complete_access` releases it: the guard is given up meanwhile.
            MutexGuard::leak(RECORDER.lock());
            h.set(true);
        }
    });
}

/// Record a completed access of the calling thread; releases the lock when `release`.
pub fn complete_access(site: SiteId, kind: EventKind, object: ObjectRef, release: bool) {
    HELD.with(|h| {
        if !h.get() {
            return;
        }
        // SAFETY: this thread holds the lock: `hold` took it and gave its guard up.
        let mut g = unsafe { RECORDER.make_guard_unchecked() };
        g.push(Some(site), kind, object);
        if release {
            h.set(false);
            drop(g);
        } else {
            std::mem::forget(g);
        }
    });
}

/// Record the calling thread's exit (once).
pub fn thread_exit() {
    if thread_state::current().is_some() && thread_state::mark_exited() {
        let me = thread_state::current().expect("checked");
        let mut r = lock();
        r.push(None, EventKind::Exit, ObjectRef::Thread(me));
        if let Some(x) = r.exited.get_mut(me.index()) {
            *x = true;
        }
    }
}

/// At the process's end, after the exit handlers: the calling thread (the ender) kills every
/// thread whose exit is not recorded, breadth first over the creation tree from `main`
/// (DESIGN §3; EXPLORE's order, but RECORD knows which threads ended where EXPLORE knows only
/// the ends in the ender's history).
pub fn record_kills() {
    let Some(me) = thread_state::current() else { return };
    let mut r = lock();
    let mut order = vec![ThreadId::MAIN];
    let mut i = 0;
    while i < order.len() {
        let p = order[i];
        let mut kids: Vec<&ThreadInfo> = r.threads.iter().filter(|t| t.parent == Some(p)).collect();
        kids.sort_by_key(|t| t.nth_child);
        order.extend(kids.into_iter().map(|t| t.id));
        i += 1;
    }
    for v in order {
        if v != me && !r.exited.get(v.index()).copied().unwrap_or(true) {
            r.push(None, EventKind::Kill, ObjectRef::Thread(v));
        }
    }
}

/// Trace writes under way (counted under the recorder's lock, done outside it).
static WRITING: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);

/// Snapshots taken so far (numbered under the recorder's lock, so a later number holds at least
/// the events of an earlier one).
static SNAPSHOTS: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);

/// The number of the snapshot last written to the trace's path. Writes are one at a time, and a
/// snapshot older than the one written is dropped: two threads failing at once (each writes its
/// snapshot before it aborts, and the abort's handler writes the last one) leave the newest
/// trace, whole, whatever order their writes come in.
static WRITTEN: parking_lot::Mutex<u64> = parking_lot::Mutex::new(0);

/// Number a snapshot; call with the recorder's lock held, and count the write in [`WRITING`].
fn next_snapshot() -> u64 {
    // SeqCst: a rare path; pairs with the load in `wait_for_writes`.
    WRITING.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
    // Relaxed: numbered under the recorder's lock, which orders the increments.
    SNAPSHOTS.fetch_add(1, std::sync::atomic::Ordering::Relaxed) + 1
}

/// Write `trace`, snapshot number `n`, unless a newer one was written; the caller counted it in
/// [`WRITING`] while it held the lock. `patience`: how long to wait for another thread's write
/// (a signal handler must not wait for good).
fn write(trace: Trace, path: PathBuf, n: u64, patience: Option<Duration>) {
    let written = match patience {
        None => Some(WRITTEN.lock()),
        Some(d) => WRITTEN.try_lock_for(d),
    };
    if let Some(mut written) = written {
        if *written < n {
            match trace.write(&path) {
                Ok(()) => *written = n,
                Err(e) => eprintln!("irs-runtime: {e}"),
            }
        }
    }
    // SeqCst: see `next_snapshot`.
    WRITING.fetch_sub(1, std::sync::atomic::Ordering::SeqCst);
}

/// Another thread closed the recording and may still be writing the trace: wait (a little) until
/// it is written, so that this thread's end of the process (`_exit` from a second thread while
/// the first runs its exit handlers) does not cut the write short and lose the trace.
fn wait_for_writes() {
    let until = std::time::Instant::now() + Duration::from_secs(5);
    // SeqCst: see `next_snapshot`.
    while WRITING.load(std::sync::atomic::Ordering::SeqCst) > 0 && std::time::Instant::now() < until {
        std::thread::sleep(Duration::from_millis(1));
    }
}

/// Write the trace now. `close` stops recording (the run is over).
pub fn finish(outcome: Outcome, close: bool) {
    let mut r = lock();
    if r.closed {
        drop(r);
        wait_for_writes();
        return;
    }
    r.closed = close;
    if let Some((trace, path)) = r.snapshot(outcome) {
        let n = next_snapshot();
        drop(r);
        write(trace, path, n, None);
    }
}

/// From a signal handler: write what we have if the lock can be had soon; never block for long.
pub fn finish_from_signal(outcome: Outcome) {
    let held_here = HELD.try_with(|h| h.replace(false)).unwrap_or(false);
    let r = if held_here {
        // SAFETY: this thread holds the lock (`hold`), interrupted by the signal inside an
        // access: the guard made here releases it.
        Some(unsafe { RECORDER.make_guard_unchecked() })
    } else {
        RECORDER.try_lock_for(Duration::from_millis(500))
    };
    if let Some(mut r) = r {
        if !r.closed {
            r.closed = true;
            if let Some((trace, path)) = r.snapshot(outcome) {
                let n = next_snapshot();
                drop(r);
                write(trace, path, n, Some(Duration::from_millis(1000)));
            }
        }
    }
    // The signal ends the process once the handler returns: another thread's write still under
    // way (a second failing thread's snapshot, or the newest one) would be cut short.
    wait_for_writes();
}
