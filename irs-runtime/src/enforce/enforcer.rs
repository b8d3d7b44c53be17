//! ENFORCE (DESIGN §4, §6; IRS paper §3.2, §4): every run contains the verified prefix, with the
//! same histories, before anything else happens.
//!
//! Before event `(t, k)` of a constrained thread:
//! 1. *ordered prefix*: if `k < cut[t]`, wait until every requirement of row `(t, k)` has
//!    completed;
//! 2. *past the cut* (`k ≥ cut[t]`), while some thread `u` has not completed its `cut[u]` events
//!    (the *window*): an event whose objects the prefix's object index names (a memory access, an
//!    operation on a program mutex, the thread's exit; `shared_proto::prefix_objects`) waits only
//!    until every event of the prefix it depends on has completed, and the thread stays
//!    constrained; any other
//!    event waits until every thread `u` has completed `cut[u]` events (or exited), the prefix
//!    barrier;
//! 3. *free*: once the window is closed (or the thread waited at the barrier), the thread clears
//!    its flag: its callbacks stop, its functions run their plain bodies.
//!
//! Rule 2 keeps DESIGN §4's guarantee (every run contains the verified prefix with the same
//! histories before anything that could change them): an event outside the prefix runs only
//! once no pending prefix event depends on it, so no prefix event's history gains an event the
//! verified trace does not have (the argument: docs/src/enforce.md, "Past the cut").
//!
//! A choice inside the prefix (which waiter a signal wakes) takes the verified trace's value
//! (`trace_choice`): with it, every event of the prefix finds its objects as the trace had them,
//! so no run waits for ever (the argument: docs/src/enforcement-progress.md). A signal handler's
//! events are nobody's (`signals`).
//!
//! Completed-event counters are cache-padded atomics, one per logical thread, written by their
//! thread only (an exited thread's counter is `u32::MAX`: infinitely advanced). Waiting spins
//! briefly, then parks on the counter with a futex that the writer only wakes when someone is
//! parked. Cutoff vectors published later (smaller ones) are adopted at once, also by waiting
//! threads, which re-read the cutoff at least every few milliseconds. An event whose site is not
//! the table's means the run has left the verified trace, and a file read that is not the
//! verified input's means the run is on another input (`input_files`): report it once and react
//! by policy (serialise the rest, stop, or release every constraint).

use crate::sync::futex;
use crate::thread::thread_flag;
use crossbeam_utils::{Backoff, CachePadded};
use parking_lot::Mutex;
use shared_proto::image_range::ImageRange;
use shared_proto::prefix_segment::{ObjectEntries, PrefixView, PUBLISHED_OFFSET};
use shared_proto::{ProgramId, SiteId, ThreadId};
use std::cell::Cell;
use std::collections::HashMap;
use std::path::Path;
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, Ordering};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

/// What to do when a run leaves the verified trace.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Divergence {
    /// Report once and run the rest one thread at a time (see [`crate::enforce::serial`]).
    Serial,
    /// Report and abort the program.
    Stop,
    /// Report once and release every constraint for the rest of the run (unverified).
    Free,
}

struct Counter {
    done: AtomicU32,
    parked: AtomicU32,
    /// The thread has started (it exists).
    started: AtomicBool,
    /// Its `pthread_t`, once its creator knows it.
    handle: AtomicU64,
}

/// The latest published cutoff a run adopted: slot `seen - 1` of the log (the ones before it are
/// larger, and were never needed).
struct Adopted {
    seen: usize,
    cut: Vec<u32>,
}

struct Enforcer {
    view: PrefixView<'static>,
    /// The prefix's object index (`None`: imprecise, or never needed: every event past a cut
    /// waits at the barrier).
    objects: Option<ObjectEntries<'static>>,
    /// Where this process's statics lie, to name a run's accesses as the index does.
    image: ImageRange,
    /// Every thread has completed its part of the cutoff in force (monotone: completion only
    /// grows, cutoffs only shrink).
    window_closed: AtomicBool,
    /// The log slot of the cutoff in force (`cuts.seen - 1`), for the window's per-event reads,
    /// which take no lock: a published slot never changes.
    adopted: std::sync::atomic::AtomicUsize,
    /// The cutoff count in the mapping, raised by a live writer (release) after each append.
    published: &'static AtomicU32,
    counters: Box<[CachePadded<Counter>]>,
    /// The cutoff in force, validated, and how many published cutoffs it stands for.
    cuts: Mutex<Adopted>,
    released: AtomicBool,
    /// The cutoff in force is all zeros: final (cutoffs only shrink), nothing is constrained.
    all_free: AtomicBool,
    reported: AtomicBool,
    policy: Divergence,
    /// `(creator, creation index)` of each thread of the trace, to its logical id.
    identities: HashMap<(u32, u32), u32>,
    watchdog: Duration,
    /// Where to say that the run left the verified trace (`IRS_REPORT`, set by `irs run`).
    report: Option<std::path::PathBuf>,
}

static ENFORCER: OnceLock<Enforcer> = OnceLock::new();

mod window;
pub use window::Touch;
use window::{barrier_open, conflict_waits};

/// The calling thread's place in the prefix.
struct Me {
    tid: Cell<Option<u32>>,
    /// Events completed by this thread.
    k: Cell<u32>,
    /// Accesses announced (`before`) and not yet completed (`after`): a memcpy opens two.
    open: Cell<u32>,
    children: Cell<u32>,
    free: Cell<bool>,
    /// How many cutoffs were published when `my_cut` was read.
    epoch: Cell<u32>,
    my_cut: Cell<u32>,
}

thread_local! {
    static ME: Me = const {
        Me {
            tid: Cell::new(None),
            k: Cell::new(0),
            open: Cell::new(0),
            children: Cell::new(0),
            free: Cell::new(true),
            epoch: Cell::new(0),
            my_cut: Cell::new(0),
        }
    };
}

fn enforcer() -> &'static Enforcer {
    ENFORCER.get().expect("ENFORCE used before start-up")
}

/// An installed segment must be a regular file of ours, not writable by others: anything else
/// is somebody else's, and refused.
pub fn check_segment_owner(path: &Path) -> Result<(), String> {
    use std::os::unix::fs::MetadataExt;
    let m = std::fs::symlink_metadata(path).map_err(|e| format!("no prefix installed for this program ({}: {e}); install one with `irs prefix install`", path.display()))?;
    // SAFETY: getuid has no preconditions.
    let me = unsafe { libc::getuid() };
    if !m.file_type().is_file() || m.uid() != me || m.mode() & 0o022 != 0 {
        return Err(format!("{} is not a prefix segment of this user (owner, type or mode is wrong); refusing it", path.display()));
    }
    Ok(())
}

/// Map the prefix at `path` and check it belongs to this program.
pub fn init(program: ProgramId, path: &Path, policy: Divergence, watchdog: Duration) -> Result<(), String> {
    let file = std::fs::File::open(path).map_err(|e| format!("cannot open the prefix {}: {e}", path.display()))?;
    let len = file.metadata().map_err(|e| e.to_string())?.len() as usize;
    if len < 64 {
        return Err(format!("{}: not an irs prefix (too short)", path.display()));
    }
    // SAFETY: a read-only shared mapping of the whole file, kept for the life of the process;
    // a live writer only appends cutoffs and raises the published count, and everything read
    // from the mapping is validated first.
    let bytes: &'static [u8] = unsafe {
        use std::os::fd::AsRawFd;
        let p = libc::mmap(std::ptr::null_mut(), len, libc::PROT_READ, libc::MAP_SHARED, file.as_raw_fd(), 0);
        if p == libc::MAP_FAILED {
            return Err(format!("cannot map the prefix {}", path.display()));
        }
        std::slice::from_raw_parts(p as *const u8, len)
    };
    let view = PrefixView::parse_for_run(bytes, Some(program)).map_err(|e| format!("{}: {e}", path.display()))?;
    // SAFETY: the offset is inside the validated header and 4-aligned in a page-aligned mapping.
    let published = unsafe { AtomicU32::from_ptr(bytes.as_ptr().add(PUBLISHED_OFFSET) as *mut u32) };
    let n = view.threads();
    let counters = (0..n)
        .map(|_| CachePadded::new(Counter { done: AtomicU32::new(0), parked: AtomicU32::new(0), started: AtomicBool::new(false), handle: AtomicU64::new(0) }))
        .collect();
    // The first cutoff, which `parse` checked; `with_cut` adopts (and checks) the others.
    let cuts = Adopted { seen: 1, cut: view.cutoff(0) };
    let mut identities = HashMap::new();
    for t in 1..n as u32 {
        let info = view.thread_info(ThreadId(t));
        if let Some(p) = info.parent {
            identities.insert((p.0, info.nth_child), t);
        }
    }
    let objects = if view.rows_checked() { view.object_index() } else { None };
    let e = Enforcer {
        view,
        objects,
        image: crate::program::program_info::image_of_this_process(),
        window_closed: AtomicBool::new(false),
        adopted: std::sync::atomic::AtomicUsize::new(0),
        published,
        counters,
        cuts: Mutex::new(cuts),
        released: AtomicBool::new(false),
        all_free: AtomicBool::new(false),
        reported: AtomicBool::new(false),
        policy,
        identities,
        watchdog,
        report: std::env::var_os("IRS_REPORT").map(std::path::PathBuf::from),
    };
    ENFORCER.set(e).map_err(|_| "ENFORCE started twice".to_string())?;
    let e = enforcer();
    with_cut(e, e.published.load(Ordering::Acquire), |_| ());
    Ok(())
}

/// Is the cutoff in force empty (every thread free from its first event)?
pub fn no_constraint() -> bool {
    // Acquire: pairs with the release store in `with_cut`.
    ENFORCER.get().is_some_and(|e| e.all_free.load(Ordering::Acquire))
}

/// The program's `main` is `T0`.
pub fn start_main() {
    start_thread(Some(0));
}

/// In a creator, before creating a thread: the new thread's logical id, if it is in the trace.
pub fn child_identity() -> Option<u32> {
    ENFORCER.get()?;
    ME.with(|me| {
        let parent = me.tid.get()?;
        let nth = me.children.get();
        me.children.set(nth + 1);
        enforcer().identities.get(&(parent, nth)).copied()
    })
}

/// The creator learnt the `pthread_t` of its child `tid` (for joins in a run serialised later).
pub fn bind_handle(tid: Option<u32>, handle: u64) {
    if let (Some(e), Some(t)) = (ENFORCER.get(), tid) {
        // Relaxed: read under the serialisation's lock after a divergence, long after.
        e.counters[t as usize].handle.store(handle, Ordering::Relaxed);
    }
}

/// In a new thread, before its start routine.
pub fn start_thread(tid: Option<u32>) {
    let Some(e) = ENFORCER.get() else {
        // Serialised from the start: no prefix, every thread calls back.
        thread_flag::set_active(crate::enforce::serial::mine() || crate::record::recorder::active());
        return;
    };
    if let Some(t) = tid {
        // Release: a serialisation that sees the thread started sees it counted.
        e.counters[t as usize].started.store(true, Ordering::Release);
    }
    if crate::enforce::serial::on() {
        // Serialised since a divergence: the new thread takes part.
        ME.with(|me| {
            me.tid.set(tid);
            me.k.set(0);
            me.open.set(0);
            me.children.set(0);
            me.free.set(false);
        });
        thread_flag::set_active(true);
        return;
    }
    // Acquire: pairs with the release stores of `released` and `all_free`.
    let released = e.released.load(Ordering::Acquire) || e.all_free.load(Ordering::Acquire);
    let free = ME.with(|me| {
        me.tid.set(tid);
        me.k.set(0);
        me.open.set(0);
        me.children.set(0);
        me.epoch.set(0);
        // A thread none of whose events is in the prefix, once every thread has completed its
        // part, would pass the barrier at its first event: it starts free, so that it runs the
        // plain bodies from the start (the case of every thread under an empty prefix).
        let free = match tid {
            None => true,
            Some(_) if released => true,
            Some(t) => my_cut(e, me, t) == 0 && barrier_open(e),
        };
        me.free.set(free);
        free
    });
    thread_flag::set_active(!free || crate::record::recorder::active());
}

/// The cutoff in force for thread `t`, refreshed when a new one was published.
fn my_cut(e: &Enforcer, me: &Me, t: u32) -> u32 {
    // Acquire: the vectors a writer filled before raising the count are visible after it.
    let p = e.published.load(Ordering::Acquire);
    if p != me.epoch.get() {
        let mine = with_cut(e, p, |cut| cut[t as usize]);
        me.epoch.set(p);
        me.my_cut.set(mine);
    }
    me.my_cut.get()
}

/// Validate and adopt the cutoffs published up to `p`, and call `f` on the one in force. No
/// allocation on a program thread once the cutoffs are adopted: the first allocation or free of
/// a thread makes glibc set up an arena for it, tens of µs that the plain build never pays.
/// A published cutoff that does not verify (its slot checksum: not written by irs, or a count
/// raised over an unwritten slot; or it is out of range or larger than the one before) is
/// reported once and ends adoption for the run: the prefix in force stays, which is safe,
/// prefixes only shrink.
fn with_cut<R>(e: &Enforcer, p: u32, f: impl FnOnce(&[u32]) -> R) -> R {
    // Set (under the lock) when a published cutoff was refused: adoption stops for good. A
    // writer never rewrites a published slot, so a retry would only refuse it again, hashing
    // and allocating on a program thread at every call. It also makes the report once only,
    // without taking `reported` from a later divergence's report.
    static REFUSED: AtomicBool = AtomicBool::new(false);
    let mut cuts = e.cuts.lock();
    let p = if REFUSED.load(Ordering::Relaxed) { 0 } else { (p as usize).min(e.view.capacity()) };
    // Straight to the latest: cutoffs only shrink, so it is the one to run under, and checking
    // it alone keeps a start under a long verification's log (hundreds of cutoffs) as cheap as
    // under a short one.
    if cuts.seen < p {
        let i = p - 1;
        match e.view.cutoff_within(i, Some(&cuts.cut)) {
            Ok(next) => *cuts = Adopted { seen: p, cut: next },
            Err(why) => {
                REFUSED.store(true, Ordering::Relaxed);
                eprintln!("irs-runtime: ignoring published cutoff {i} and any after it: {why}; the prefix in force stays");
            }
        }
    }
    // Release: the slot's bytes (validated above) are read after an acquire load of it.
    e.adopted.store(cuts.seen - 1, Ordering::Release);
    let current = &cuts.cut;
    if current.iter().all(|c| *c == 0) {
        // Release: a thread that sees the flag also sees that nothing is to be waited for.
        e.all_free.store(true, Ordering::Release);
    }
    f(current)
}

/// Wait until thread `u` has completed `count` events. `false` when a new cutoff was published
/// meanwhile (the caller re-decides) or everything was released.
fn wait_for(e: &Enforcer, me: &Me, u: u32, count: u32, waiter: (u32, u32)) -> bool {
    let c = &e.counters[u as usize];
    if c.done.load(Ordering::Acquire) >= count {
        return true;
    }
    let backoff = Backoff::new();
    let started = Instant::now();
    let mut warned = false;
    loop {
        let v = c.done.load(Ordering::Acquire);
        if v >= count {
            return true;
        }
        if e.released.load(Ordering::Acquire) || crate::enforce::serial::on() || e.published.load(Ordering::Acquire) != me.epoch.get() {
            return false;
        }
        // Spin, then yield, for a while before parking: the events waited for are usually
        // microseconds away, and a futex wake costs tens of them on a busy machine.
        if !backoff.is_completed() || started.elapsed() < SPIN_BEFORE_PARK {
            backoff.snooze();
            continue;
        }
        // SeqCst with the writer's store and check of `parked`: either it sees us parked and
        // wakes us, or we see its new count here.
        c.parked.fetch_add(1, Ordering::SeqCst);
        let v = c.done.load(Ordering::SeqCst);
        if v < count {
            futex::wait(&c.done, v, Duration::from_millis(2));
        }
        c.parked.fetch_sub(1, Ordering::SeqCst);
        if !warned && started.elapsed() > e.watchdog {
            warned = true;
            eprintln!(
                "irs-runtime: watchdog: T{}#{} has waited {:.1} s for T{u} to complete {count} events (it has completed {})",
                waiter.0,
                waiter.1,
                started.elapsed().as_secs_f64(),
                c.done.load(Ordering::Acquire).min(count)
            );
        }
    }
}

/// How long a waiter spins and yields before it parks.
const SPIN_BEFORE_PARK: Duration = Duration::from_micros(50);

fn become_free(me: &Me) {
    me.free.set(true);
    // Recording alongside: free threads keep calling back so that their events are recorded.
    if !crate::record::recorder::active() {
        thread_flag::set_active(false);
    }
}

/// What the reaction does, in words, for the report.
fn reaction_text(policy: Divergence) -> &'static str {
    match policy {
        Divergence::Stop => "stopping (reaction stop)",
        Divergence::Serial => "the rest of this run is serialised (one thread at a time; not verified)",
        Divergence::Free => "releasing every constraint for the rest of this run (reaction free: not verified)",
    }
}

/// Say (once per run) that the run is somewhere no verification covers: on stderr, and to `irs
/// run` (`IRS_REPORT`).
fn report_once(e: &Enforcer, line: &str) {
    if !e.reported.swap(true, Ordering::Relaxed) {
        eprintln!("irs-runtime: this run {line}");
        if let Some(p) = &e.report {
            let _ = std::fs::write(p, format!("{line}\n"));
        }
    }
}

/// The run left the verified trace at `(t, k)`: report it (once), then react by the policy.
/// Returns whether the calling thread is serialised from here on.
fn diverge(e: &Enforcer, t: u32, k: u32, got: Option<SiteId>, expected: Option<SiteId>) -> bool {
    let name = |s: Option<SiteId>| s.and_then(crate::program::program_info::site_description).unwrap_or_else(|| "the thread's end".into());
    report_once(e, &format!("left the verified trace at T{t}#{k}: it does {}, the trace did {}; {}", name(got), name(expected), reaction_text(e.policy)));
    // No thread has passed its barrier (this one has not completed its part of the cutoff), so
    // every thread of the run still calls back: all can take part in a serialisation.
    react(e, Some(t))
}

/// The run reads input its verification did not (a file that differs from the verified one,
/// or one no verified execution opened; `input_files`), before the program has read a byte of
/// it: report it and react. Serialising needs every thread to still call back, which holds
/// while the calling thread is inside its part of the prefix in force (no thread can have
/// passed the barrier then); past it, threads may already run free, and the rest of the run
/// cannot be serialised: it is reported as not verified, and runs on (or stops, by `stop`).
pub fn input_diverged(why: &str) {
    let Some(e) = ENFORCER.get() else { return };
    if crate::enforce::serial::on() {
        return;
    }
    let inside = ME.with(|me| match me.tid.get() {
        Some(t) if !me.free.get() => me.k.get() < my_cut(e, me, t),
        _ => false,
    });
    if inside || e.policy != Divergence::Serial {
        report_once(e, &format!("reads input no verification covers: {why}; {}", reaction_text(e.policy)));
        // Serialised: the calling thread takes part under its own id (`serial::begin`).
        react(e, ME.with(|me| me.tid.get()));
    } else {
        report_once(e, &format!("reads input no verification covers: {why}; its threads already run past the verified prefix, so the rest cannot be serialised: the rest of this run is not verified"));
        e.released.store(true, Ordering::Release);
        for c in e.counters.iter() {
            futex::wake_all(&c.done);
        }
    }
}

/// React to a run no verification covers any more, by the policy; `t`: the calling thread.
/// Returns whether the run is serialised from here on.
fn react(e: &Enforcer, t: Option<u32>) -> bool {
    match e.policy {
        Divergence::Stop => std::process::abort(),
        Divergence::Serial => {
            // Acquire: pairs with the release in `start_thread`.
            let threads = e.counters.iter().map(|c| match (c.started.load(Ordering::Acquire), c.done.load(Ordering::Acquire)) {
                (false, _) => None,
                (true, u32::MAX) => Some(false),
                (true, _) => Some(true),
            });
            let exited = e.counters.iter().filter(|c| c.done.load(Ordering::Acquire) == u32::MAX).map(|c| c.handle.load(Ordering::Relaxed)).filter(|&h| h != 0).collect();
            crate::enforce::serial::begin(threads.collect(), exited, t);
        }
        Divergence::Free => e.released.store(true, Ordering::Release),
    }
    for c in e.counters.iter() {
        futex::wake_all(&c.done);
    }
    e.policy == Divergence::Serial
}

/// Serialised (see [`crate::enforce::serial`]): the calling thread's next event waits for its turn.
fn serial_step(me: &Me) {
    if !me.free.get() {
        crate::enforce::serial::adopt(me.tid.get());
    }
    crate::enforce::serial::acquire(crate::enforce::serial::Op::Step);
}

/// Run `f`, a real blocking wait inside an event (a join, a wait for a primitive), as *away*
/// for a serialised run that begins meanwhile (a divergence in another thread): a decision
/// waits for every live thread to park, and a thread asleep in the C library or on a futex
/// would never park, while the thread it waits for would never get the turn. Away, it is
/// neither waited for nor given the turn until its wait ends; it then goes on to its next
/// event, where it parks as any other.
pub fn blocking<R>(f: impl FnOnce() -> R) -> R {
    let t = ME.try_with(|me| if me.free.get() { None } else { me.tid.get() }).ok().flatten();
    if let Some(t) = t {
        crate::enforce::serial::set_away_id(t, true);
    }
    let r = f();
    if let Some(t) = t {
        crate::enforce::serial::set_away_id(t, false);
    }
    r
}

/// Before the calling thread's next event (`site`: its instruction; `None` for its exit).
pub fn before(site: Option<SiteId>) {
    before_touching(site, None)
}

/// [`before`] for an event that touches `touch` (past the cut it may then wait for less).
pub fn before_touching(site: Option<SiteId>, touch: Option<Touch>) {
    ME.with(|me| {
        if crate::enforce::serial::on() {
            return serial_step(me);
        }
        let Some(t) = me.tid.get() else { return };
        if me.free.get() {
            return;
        }
        let e = enforcer();
        let k = me.k.get() + me.open.get();
        me.open.set(me.open.get() + 1);
        'decide: loop {
            if crate::enforce::serial::on() {
                return serial_step(me);
            }
            if e.released.load(Ordering::Acquire) || e.all_free.load(Ordering::Acquire) {
                become_free(me);
                return;
            }
            let cut_t = my_cut(e, me, t);
            if k < cut_t {
                // Rule 1: the ordered prefix.
                let (expected, reqs) = e.view.row(ThreadId(t), k);
                if expected != site {
                    if diverge(e, t, k, site, expected) {
                        return serial_step(me);
                    }
                    become_free(me);
                    return;
                }
                for q in reqs {
                    if !wait_for(e, me, q.thread.0, q.count, (t, k)) {
                        continue 'decide;
                    }
                }
                return;
            }
            // Rule 2: past the cut. Once every thread has completed its part, rule 3.
            if barrier_open(e) {
                become_free(me);
                return;
            }
            // In the window: an event the index names waits for what it depends on only, and
            // the thread stays constrained.
            match touch.and_then(|x| conflict_waits(e, me, t, k, x)) {
                Some(true) => return,
                Some(false) => continue 'decide,
                None => {}
            }
            // Any other event waits at the barrier.
            // One thread at a time: the cutoff in force (copied out of the lock, no allocation).
            let threads = e.counters.len();
            for u in 0..threads {
                let c = with_cut(e, me.epoch.get(), |cut| cut[u]);
                if !wait_for(e, me, u as u32, c, (t, k)) {
                    continue 'decide;
                }
            }
            become_free(me);
            return;
        }
    });
}

/// The calling thread completed the event announced by its last `before`.
pub fn after() {
    if crate::enforce::serial::on() {
        return;
    }
    ME.with(|me| {
        let Some(t) = me.tid.get() else { return };
        if me.open.get() == 0 {
            return;
        }
        me.open.set(me.open.get() - 1);
        if me.free.get() {
            return;
        }
        let k = me.k.get() + 1;
        me.k.set(k);
        publish(t, k);
    })
}

fn publish(t: u32, v: u32) {
    let c = &enforcer().counters[t as usize];
    // SeqCst: pairs with the waiters' registration in `parked` (see `wait_for`).
    c.done.store(v, Ordering::SeqCst);
    if c.parked.load(Ordering::SeqCst) > 0 {
        futex::wake_all(&c.done);
    }
}

/// The calling thread ends: the rules of its exit event ...
pub fn exit_before() {
    before_touching(None, Some(Touch::Exit));
}

/// ... and then it counts as infinitely advanced.
pub fn exit_after() {
    if ENFORCER.get().is_none() {
        return;
    }
    let t = ME.with(|me| {
        me.open.set(0);
        me.tid.get()
    });
    if let Some(t) = t {
        publish(t, u32::MAX);
    }
}

/// At the process's end, after the exit handlers (DESIGN §3): the calling thread's remaining
/// events of the verified trace inside the cutoff are its kills; each waits for what it follows
/// there (rule 1: the killed thread's events before the kill), and none is completed, so that a
/// thread the verified trace cut off stays behind its barrier until the process is gone.
pub fn end_waits() {
    let Some(e) = ENFORCER.get() else { return };
    if crate::enforce::serial::on() {
        return;
    }
    loop {
        let go_on = ME.with(|me| {
            let Some(t) = me.tid.get() else { return false };
            if me.free.get() {
                return false;
            }
            let k = me.k.get() + me.open.get();
            k < my_cut(e, me, t) && k < e.view.thread_rows(ThreadId(t))
        });
        if !go_on {
            return;
        }
        before(None);
    }
}

/// The value the verified trace chose at the calling thread's event in progress (announced by
/// `before`, not yet completed), when that event is a choice inside the prefix in force: which
/// waiter a signal wakes, a `__VERIFIER_nondet_*` value. The run must choose the same, or the
/// events after it are not the trace's: a signal that wakes another waiter than the trace's
/// leaves the trace's waiter blocked while the table has the events after its wake-up required
/// by other threads, a cycle of waits (docs/src/enforcement-progress.md). `None` outside the prefix
/// (free: every value was explored) and when serialised (the verifier's default policy: 0). A
/// value the run cannot take (`of` values here) means the run has left the verified trace.
pub fn trace_choice(of: u32) -> Option<u32> {
    let e = ENFORCER.get()?;
    if crate::enforce::serial::on() {
        return None;
    }
    let (t, k, v) = ME.with(|me| {
        let t = me.tid.get()?;
        if me.free.get() || me.open.get() == 0 {
            return None;
        }
        let k = me.k.get() + me.open.get() - 1;
        if k >= my_cut(e, me, t) {
            return None;
        }
        Some((t, k, e.view.choice(ThreadId(t), k)?))
    })?;
    if v < of {
        return Some(v);
    }
    report_once(e, &format!("left the verified trace at T{t}#{k}: it chooses among {of} values, the trace chose value {v}; {}", reaction_text(e.policy)));
    react(e, Some(t));
    None
}

/// Is the calling thread still constrained (so that wrappers announce its events)?
pub fn constrained() -> bool {
    !crate::thread::signal_state::inside() && (crate::enforce::serial::mine() || (ENFORCER.get().is_some() && ME.with(|me| me.tid.get().is_some() && !me.free.get())))
}
