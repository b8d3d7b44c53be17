//! Random small concurrent C programs for the differential campaign (tests/differential.rs,
//! benchmarks/differential/run.py): each one is a deterministic function of a `u64` seed (and of
//! the generator's options, [`GenOptions`]; `generate` uses the defaults).
//!
//! A program has `main` plus 1–3 threads (one of them may create a child of its own), and
//! uses globals `int g0, g1, g2`, mutexes `m0`, `m1` (static initializers), a heap block of three
//! ints that `main` allocates before the threads start (passed as the thread's argument or
//! through the global pointer `hp`), and blocks that a thread allocates for itself (and may
//! publish through the global pointer `pub` for others to read). Statements: writes of constants
//! or of a local plus one, increments (`g = g + 1`), reads into locals, assertions on values read
//! (`assert(r1 != 2)`, `assert(r1 + r2 != 3)`, `main` checking a global after joining), lock/unlock
//! blocks (nested in either order, so lock inversions and hence deadlocks happen), `if
//! (pthread_mutex_trylock(&m) == 0) { ...; unlock }`, branches on values read, and a thread ending
//! early on a value read. Threads end by `return`, `pthread_exit(0)`, `exit(k)` or `_exit(k)`;
//! `main` joins all, some or none of them, detaches some, and ends by `return`, `pthread_exit(0)`
//! or `exit(k)`; it may register an `atexit` handler that reads a global and asserts on it (not
//! when it ends by `pthread_exit`: EXPLORE refuses to run handlers on whichever thread ends last).
//! Assertions are drawn "may fail" (comparing with a value the location may hold) or "safe" (a
//! value it never holds) with a per-program rate, so that about half the programs have bugs.
//!
//! **Synchronisation scenarios** (docs/src/synchronisation.md and docs/src/spin-waits.md).
//! With probability [`GenOptions::sync_percent`] (default [`SYNC_PERCENT`]) a program also gets
//! one (or, a third of the time, two) of the following, each played by 1–3 of its threads (main
//! included), inserted at the top level of their bodies (in `main` and in a thread with a child:
//! after the creates, before the joins):
//! - `cond`: `pthread_cond_t cv0` with the predicate `int cf0`: waiters lock `m0` or `m1` and wait
//!   in a `while (!cf0)` loop, or (a quarter of them) with no predicate loop (a lost wake-up:
//!   a deadlock); the signaller sets `cf0` and signals (`pthread_cond_signal`, or
//!   `pthread_cond_broadcast`) under the mutex, after unlocking it, or before setting `cf0` (a
//!   signal that can come before the wait, and be lost); two waiters and one `signal` leave one
//!   waiting (a deadlock where both wait before the signal).
//! - `sem`: `sem_t s0`, `sem_init` with 0, 1 or 2 by `main` before the creates; `sem_wait` /
//!   `sem_post` hand-offs and critical sections, `if (sem_trywait(&s0) == 0) { ...; [sem_post] }`;
//!   more waits than posts and the initial count are deadlocks.
//! - `once`: `pthread_once(&once0, init_once0)` from 2–3 threads; the function increments a global
//!   (which threads then read and assert on).
//! - `barrier`: `pthread_barrier_t b0` initialised by `main` for the 2 (or 3) threads that wait at
//!   it, writing before and reading after; sometimes for one thread more than arrive (a deadlock),
//!   sometimes for one fewer (more threads than the count: the barrier is ordered).
//! - `rwlock`: `pthread_rwlock_t rw0`: `rdlock`, `wrlock`, `tryrdlock`, `trywrlock`, `unlock`
//!   around reads and writes; sometimes nested with a mutex in opposite orders (a deadlock).
//! - `recursive`: `pthread_mutex_t rm0 = PTHREAD_RECURSIVE_MUTEX_INITIALIZER_NP` (so the program
//!   starts with `#define _GNU_SOURCE`) relocked and tried by its owner, tried by others; sometimes
//!   relocked once more than unlocked (held for good: others deadlock on it).
//! - `spin`: `volatile int sf0, sf1`: a thread spins `while (!sf0) ;` (a loop that only reads: the
//!   runtime ends it, discarded, or reports a livelock) for a flag another thread sets, sets only
//!   on a value read, never sets, or sets only after spinning on `sf1` itself (a livelock).
//! - `atomics`: `int a0, a1` (a1 a third of the time) touched only by `__atomic_*` builtins
//!   (`__ATOMIC_SEQ_CST`), to exercise the value model's idle updates (an update that leaves
//!   memory as it found it is a read when the value it finds is known:
//!   shared_proto/src/value_model.rs): `main` stores 0 or 1 before the creates (atomically, or
//!   with a plain store), or nobody does (updates then find an unknown value until a store,
//!   and half the time nobody stores at all); 2–3 threads each make 1–3 of: a compare-exchange
//!   with small constants (`r = e; ok = __atomic_compare_exchange_n(&a0, &r, d, 0, ...)`: 0→1,
//!   1→2, 0→0, 1→1, 1→0, 2→1), its result or the value it found asserted on or branched on; a
//!   compare-exchange "lock" (`if (ok == 1) { write a global; release }`, the release a store of
//!   0, an exchange to 0 or a `fetch_sub` of 1); `__atomic_exchange_n` of 0 or 1 and
//!   `__atomic_fetch_add` / `__atomic_fetch_sub` of 0 or 1 (the old value kept in a local, or
//!   dropped); an atomic store of 0–2; an atomic load (asserted or branched on). No loops (no
//!   retries): nothing waits, so the scenario adds no deadlock. Sometimes `main` loads `a0`
//!   after its joins and asserts on it.
//!
//! Whether a program gets a scenario, and which, is drawn from a second random stream of the
//! seed, so a program that gets none is the one the generator made before scenarios existed,
//! byte for byte (checked on seeds 0–2999). The programs of the seeds that get one changed when
//! the scenarios were added (after commit e07a7c6): about a third of every seed range, with
//! `sync_percent` 35, so earlier campaigns' reports name other programs for those seeds.
//! `atomics` came later, drawn from the same stream after the others: a sixth of the programs
//! that draw scenarios but not `spin` get `atomics` in place of the last one drawn; every other
//! program (those with `spin` included, which tests/spin_rule.rs runs) is byte for byte what it
//! was before `atomics` existed (checked on seeds 0–2999).
//! `GenOptions { sync_percent: 0, scenario: None }` gives the earlier generator exactly.
//!
//! Every program ends under every schedule, or ends in a deadlock or a livelock the runtime
//! detects: there are no loops but a condition variable's predicate loop (it waits again only
//! after a signal, and its flag is only ever set) and spin-waits that only read a flag (nothing
//! in them writes or counts), every mutex is released on every path (except by a thread that
//! fails an assertion while holding it, or that the process's end cuts off, and the recursive
//! mutex relocked once too often), and nobody waits for anyone except by join (of its own
//! children, with no lock held), by locks, and by the scenarios' waits (deadlocks and livelocks,
//! which are bugs the oracle sees too, are possible).
//!
//! Size: threads get fewer statements the more threads there are, and the generator counts the
//! program's interleavings in a model of its visible operations (`Gen::estimate`: locks block,
//! and so do the scenarios' waits, each modelled with the events the runtime's implementation
//! makes: internal locks, gates, choices, a spin-wait's reads and end; values, failures, failed
//! trylocks and early ends are ignored; an upper bound on the oracle's count in practice, never
//! exceeded in 3,000 programs without scenarios) and draws again (from the same random stream)
//! until that is at most `MAX_ESTIMATE`, or `MAX_SYNC_ESTIMATE` with a scenario. A scenario's
//! operations leave little room: such a program gets half the usual statements, more threads
//! (one thread besides main is drawn as two half the time), and every 8 draws rejected fewer
//! statements still, then no nested child, then fewer threads (`Gen::shrink`). The oracle needs
//! about 1/20,000 s per interleaving here; the campaign's programs have at most about 29,000.
#![allow(dead_code)]

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::fmt::Write as _;

/// Programs whose model has more interleavings than this are drawn again.
pub const MAX_ESTIMATE: u64 = 30_000;

/// The same for programs with a synchronisation scenario (their model is looser: waits are
/// modelled with every event they may make).
pub const MAX_SYNC_ESTIMATE: u64 = 15_000;

/// The default percentage of programs that get a synchronisation scenario.
pub const SYNC_PERCENT: u32 = 35;

/// What the generator may put in a program.
#[derive(Clone, Debug)]
pub struct GenOptions {
    /// Percentage of seeds whose program gets a synchronisation scenario (0: none, the generator
    /// before scenarios existed).
    pub sync_percent: u32,
    /// Give every program this scenario (by its feature name: `cond`, `sem`, `once`, `barrier`,
    /// `rwlock`, `recursive`, `spin`, `atomics`) and no other, for a campaign on one primitive.
    pub scenario: Option<String>,
}

impl Default for GenOptions {
    fn default() -> GenOptions {
        GenOptions { sync_percent: SYNC_PERCENT, scenario: None }
    }
}

/// The scenario of the feature name `name`.
fn scenario_named(name: &str) -> Sync {
    const NAMES: [&str; 8] = ["cond", "sem", "once", "barrier", "rwlock", "recursive", "spin", "atomics"];
    let i = NAMES.iter().position(|n| *n == name).unwrap_or_else(|| panic!("no scenario `{name}` (one of {})", NAMES.join(", ")));
    if i < SYNCS.len() {
        SYNCS[i]
    } else {
        Sync::Atomics
    }
}

/// A synchronisation scenario (see the module's documentation).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Sync {
    Cond,
    Sem,
    Once,
    Barrier,
    RwLock,
    Recursive,
    Spin,
    Atomics,
}

/// The scenarios drawn with `pick` (`Atomics` is drawn apart, so that these draws are as they
/// were before it existed).
const SYNCS: [Sync; 7] = [Sync::Cond, Sync::Sem, Sync::Once, Sync::Barrier, Sync::RwLock, Sync::Recursive, Sync::Spin];

/// The second random stream's salt (which scenarios a seed's program gets).
const SYNC_SALT: u64 = 0x5C0E_D51C_0000_0020;

/// Percentage of the programs that draw scenarios (but not `spin`) that get `atomics` in place of
/// the last one drawn.
const ATOMICS_PERCENT: u32 = 17;

/// splitmix64: a small deterministic generator (no crates).
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Rng {
        // A salt, so that seed 0 is not a special stream.
        Rng(seed.wrapping_mul(0x2545_F491_4F6C_DD1D) ^ 0xD1FF_5EED_0018_0004)
    }

    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Uniform in `0..n` (n > 0).
    pub fn below(&mut self, n: usize) -> usize {
        (self.next_u64() % n as u64) as usize
    }

    /// True with probability `percent`/100.
    pub fn chance(&mut self, percent: u32) -> bool {
        (self.next_u64() % 100) < percent as u64
    }

    pub fn pick<T: Copy>(&mut self, v: &[T]) -> T {
        v[self.below(v.len())]
    }
}

/// A memory location a statement touches.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Loc {
    /// `g{i}`
    G(usize),
    /// `h[i]`: main's heap block (main's local `h`, a thread's local `h` from its argument or `hp`).
    H(usize),
    /// `o[i]`: the thread's own heap block.
    O(usize),
    /// `a{i}`: a word of the `atomics` scenario (only ever accessed by `__atomic_*` builtins but
    /// for main's plain store before the creates).
    A(usize),
    /// No location: what a compare-exchange returns (0 or 1), as a local's source.
    Bool,
}

impl Loc {
    fn c(self) -> String {
        match self {
            Loc::G(i) => format!("g{i}"),
            Loc::H(i) => format!("h[{i}]"),
            Loc::O(i) => format!("o[{i}]"),
            Loc::A(i) => format!("a{i}"),
            Loc::Bool => unreachable!("a compare-exchange's result is no location"),
        }
    }
}

/// How a thread (or `main`) ends, or ends early.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum End {
    Return,
    PthreadExit,
    Exit(i32),
    UnderscoreExit(i32),
}

impl End {
    fn c(self) -> String {
        match self {
            End::Return => "return 0;".into(),
            End::PthreadExit => "pthread_exit(0);".into(),
            End::Exit(k) => format!("exit({k});"),
            End::UnderscoreExit(k) => format!("_exit({k});"),
        }
    }

    /// Whether this end ends the process (from a thread other than main: exit and _exit only).
    fn ends_process(self, is_main: bool) -> bool {
        match self {
            End::Return => is_main,
            End::PthreadExit => false,
            End::Exit(_) | End::UnderscoreExit(_) => true,
        }
    }
}

/// A value an assertion compares with, resolved once the whole program is known.
#[derive(Clone, Copy, Debug)]
enum Want {
    /// A value the location may hold (the assertion may fail).
    MayFail,
    /// A value it never holds.
    Safe,
}

#[derive(Clone, Debug)]
enum St {
    Read { r: usize, loc: Loc },
    WriteConst { loc: Loc, v: i32 },
    WriteLocal { loc: Loc, r: usize },
    Incr { loc: Loc },
    /// `assert(r != c)`
    AssertNe { r: usize, want: Want, c: i32 },
    /// `assert(ra + rb != c)`
    AssertSumNe { a: usize, b: usize, want: Want, c: i32 },
    /// `assert(loc != c)` (one load)
    Check { loc: Loc, want: Want, c: i32 },
    Lock { m: usize, body: Vec<St> },
    TryLock { m: usize, body: Vec<St> },
    If { r: usize, v: i32, body: Vec<St> },
    EndIf { r: usize, v: i32, end: End },
    /// `pub = o;`
    Publish,
    /// `{ int *q = pub; if (q) r = q[cell]; }`
    ReadPub { r: usize, cell: usize },
    Create { t: usize },
    Join { t: usize },
    Detach { t: usize },
    // ---- synchronisation scenarios (top level of a body only, but for the bodies below) ----
    /// `lock(m); [while (!cf0)] pthread_cond_wait(&cv0, &m); body; unlock(m);`
    CondWait { m: usize, pred: bool, body: Vec<St> },
    /// Set `cf0` (after `body`) under `m`, and signal or broadcast `cv0` where `at` says.
    CondSignal { m: usize, broadcast: bool, at: SignalAt, body: Vec<St> },
    /// `sem_init(&s0, 0, v);` (main, before the creates)
    SemInit { v: u32 },
    /// `sem_wait(&s0);`
    SemWait,
    /// `sem_post(&s0);`
    SemPost,
    /// `if (sem_trywait(&s0) == 0) { body; [sem_post(&s0);] }`
    SemTry { post: bool, body: Vec<St> },
    /// `pthread_once(&once0, init_once0);` (the function increments `g{Gen::once_g}`)
    Once,
    /// `pthread_barrier_init(&b0, 0, n);` (main, before the creates)
    BarrierInit { n: u32 },
    /// `pthread_barrier_wait(&b0);`
    BarrierWait,
    /// `pthread_rwlock_{rd,wr}lock(&rw0); body; pthread_rwlock_unlock(&rw0);`, or with `try_`
    /// `if (pthread_rwlock_try{rd,wr}lock(&rw0) == 0) { body; unlock }`
    RwLock { write: bool, try_: bool, body: Vec<St> },
    /// `pthread_mutex_lock(&rm0); body; [pthread_mutex_unlock(&rm0);]`
    RecLock { unlock: bool, body: Vec<St> },
    /// `if (pthread_mutex_trylock(&rm0) == 0) { body; pthread_mutex_unlock(&rm0); }`
    RecTry { body: Vec<St> },
    /// `while (!sf{f}) ;`
    SpinWait { f: usize },
    /// `sf{f} = 1;`
    SpinSet { f: usize },
    /// `__atomic_store_n(&a{w}, v, __ATOMIC_SEQ_CST);`, or (`plain`) `a{w} = v;`
    AtomStore { w: usize, plain: bool, v: i32 },
    /// `r{r} = __atomic_load_n(&a{w}, __ATOMIC_SEQ_CST);`
    AtomLoad { r: usize, w: usize },
    /// `r{e} = exp; [r{ok} =] __atomic_compare_exchange_n(&a{w}, &r{e}, des, 0, __ATOMIC_SEQ_CST,
    /// __ATOMIC_SEQ_CST);` (`r{e}` is then the value found)
    Cas { w: usize, e: usize, exp: i32, des: i32, ok: Option<usize> },
    /// `[r{r} =] __atomic_exchange_n(&a{w}, v, ...)`, `__atomic_fetch_add(&a{w}, v, ...)` or
    /// `__atomic_fetch_sub(&a{w}, v, ...)` (`__ATOMIC_SEQ_CST`)
    Rmw { w: usize, op: RmwOp, v: i32, r: Option<usize> },
}

/// A read-modify-write of the `atomics` scenario.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum RmwOp {
    Xchg,
    Add,
    Sub,
}

impl RmwOp {
    fn builtin(self) -> &'static str {
        match self {
            RmwOp::Xchg => "__atomic_exchange_n",
            RmwOp::Add => "__atomic_fetch_add",
            RmwOp::Sub => "__atomic_fetch_sub",
        }
    }
}

/// Where a condition variable's signaller signals.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum SignalAt {
    /// Under the mutex, after setting the predicate.
    Under,
    /// After unlocking the mutex.
    After,
    /// Before locking the mutex to set the predicate (the signal may come before the wait).
    Before,
}

impl St {
    /// The statements nested in this one, if any.
    fn body(&self) -> Option<&Vec<St>> {
        match self {
            St::Lock { body, .. }
            | St::TryLock { body, .. }
            | St::If { body, .. }
            | St::CondWait { body, .. }
            | St::CondSignal { body, .. }
            | St::SemTry { body, .. }
            | St::RwLock { body, .. }
            | St::RecLock { body, .. }
            | St::RecTry { body, .. } => Some(body),
            _ => None,
        }
    }

    fn body_mut(&mut self) -> Option<&mut Vec<St>> {
        match self {
            St::Lock { body, .. }
            | St::TryLock { body, .. }
            | St::If { body, .. }
            | St::CondWait { body, .. }
            | St::CondSignal { body, .. }
            | St::SemTry { body, .. }
            | St::RwLock { body, .. }
            | St::RecLock { body, .. }
            | St::RecTry { body, .. } => Some(body),
            _ => None,
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum HeapVia {
    None,
    Arg,
    Global,
}

#[derive(Clone, Debug)]
struct Thread {
    /// 0 is main.
    id: usize,
    creator: usize,
    body: Vec<St>,
    end: End,
    heap: HeapVia,
    own: bool,
    publishes: bool,
    /// locals r1..=locals, and the location each was read from (None: read from `pub`'s block).
    local_src: Vec<Option<Loc>>,
}

/// What a generated program exercises (for the campaign's histogram and minimums).
#[derive(Clone, Debug, Default)]
pub struct Features {
    /// Threads other than main (nested child included).
    pub threads: usize,
    /// The names of the features present, sorted.
    pub names: BTreeSet<&'static str>,
}

impl Features {
    pub fn has(&self, f: &str) -> bool {
        self.names.contains(f)
    }

    pub fn line(&self) -> String {
        let mut v = vec![format!("threads={}", self.threads)];
        v.extend(self.names.iter().map(|s| s.to_string()));
        v.join(" ")
    }
}

/// Every feature name `Features` can hold, in a fixed order (for histograms).
pub const ALL_FEATURES: &[&str] = &[
    "mutex",
    "nested-locks",
    "trylock",
    "branch",
    "incr",
    "heap-main",
    "heap-main-arg",
    "heap-main-global",
    "heap-own",
    "heap-publish",
    "asserts",
    "assert-may-fail",
    "main-check",
    "nested-create",
    "joined",
    "detached",
    "never-joined",
    "child-joined",
    "child-detached",
    "child-never-joined",
    "thread-return",
    "thread-pthread-exit",
    "thread-exit",
    "thread-_exit",
    "thread-end-if",
    "main-return",
    "main-pthread-exit",
    "main-exit",
    "atexit",
    "sync",
    "cond",
    "cond-no-predicate",
    "cond-broadcast",
    "cond-two-waiters",
    "cond-signal-unlocked",
    "cond-signal-early",
    "sem",
    "sem-init-0",
    "sem-init-1",
    "sem-init-2",
    "sem-trywait",
    "once",
    "barrier",
    "barrier-short",
    "barrier-over",
    "rwlock",
    "rwlock-try",
    "rwlock-mutex-nested",
    "recursive",
    "recursive-trylock",
    "recursive-unbalanced",
    "spin",
    "spin-conditional",
    "spin-never-set",
    "spin-mutual",
    "atomics",
    "atomics-init",
    "atomics-init-plain",
    "atomics-no-store",
    "atomics-two-words",
    "atomics-cas",
    "atomics-cas-lock",
    "atomics-xchg",
    "atomics-add",
    "atomics-idle",
];

pub struct Generated {
    pub seed: u64,
    pub source: String,
    pub features: Features,
    /// The generator's model's interleaving count (see the module's documentation).
    pub estimate: u64,
    /// Draws rejected as too big before this one.
    pub redraws: usize,
}

/// The program of `seed` (with the default options).
pub fn generate(seed: u64) -> Generated {
    generate_with(seed, &GenOptions::default())
}

/// The program of `seed` with `opts`.
pub fn generate_with(seed: u64, opts: &GenOptions) -> Generated {
    let mut rng = Rng::new(seed);
    // Which scenarios, from a stream of its own: a program without any is drawn exactly as
    // before scenarios existed.
    let mut srng = Rng::new(seed ^ SYNC_SALT);
    let mut syncs: Vec<Sync> = Vec::new();
    if let Some(name) = &opts.scenario {
        syncs.push(scenario_named(name));
    } else if srng.chance(opts.sync_percent) {
        let k = if srng.chance(33) { 2 } else { 1 };
        while syncs.len() < k {
            let s = srng.pick(&SYNCS);
            if !syncs.contains(&s) {
                syncs.push(s);
            }
        }
        // A draw more, after the others: those programs that do not get atomics are unchanged.
        if !syncs.contains(&Sync::Spin) && srng.chance(ATOMICS_PERCENT) {
            *syncs.last_mut().unwrap() = Sync::Atomics;
        }
        syncs.sort();
    }
    let max = if syncs.is_empty() { MAX_ESTIMATE } else { MAX_SYNC_ESTIMATE };
    let mut redraws = 0;
    loop {
        let mut g = Gen::new(&mut rng);
        g.syncs = syncs.clone();
        // A scenario adds many operations: every 8 draws rejected, draw smaller programs (fewer
        // statements first, then fewer threads).
        g.shrink = if syncs.is_empty() { 0 } else { redraws / 8 };
        g.build();
        let estimate = g.estimate();
        if estimate <= max {
            let features = g.features();
            let source = g.emit(seed, &features, estimate, opts.scenario.as_deref());
            return Generated { seed, source, features, estimate, redraws };
        }
        redraws += 1;
    }
}

struct Gen<'a> {
    rng: &'a mut Rng,
    threads: Vec<Thread>,
    /// Globals used (a prefix of g0..g2).
    nglobals: usize,
    /// Mutexes usable (a prefix of m0, m1).
    nmutexes: usize,
    heap_main: bool,
    atexit: Option<(usize, Want, i32)>,
    /// Percentage of assertions that may fail.
    fail_percent: u32,
    /// fate of each non-main thread: 0 joined, 1 detached, 2 never joined (by its creator).
    fate: BTreeMap<usize, u8>,
    /// Two threads that nest m0 and m1 in opposite orders (a possible deadlock), if any.
    inversion: Vec<usize>,
    /// The synchronisation scenarios to add.
    syncs: Vec<Sync>,
    /// The global `init_once0` increments.
    once_g: Option<usize>,
    /// The semaphore's initial count.
    sem_init: u32,
    /// The barrier's count.
    barrier_n: u32,
    /// How much smaller than usual to draw the program (0: as usual; with a scenario only).
    shrink: usize,
}

const CELLS: usize = 3;
const OWN_CELLS: usize = 2;
const SAFE: i32 = 42;

impl<'a> Gen<'a> {
    fn new(rng: &'a mut Rng) -> Gen<'a> {
        let nglobals = rng.pick(&[1, 2, 2, 3]);
        let nmutexes = rng.pick(&[0, 1, 1, 2, 2]);
        let heap_main = rng.chance(35);
        let fail_percent = rng.pick(&[0, 0, 40, 70, 100, 100]);
        Gen { rng, threads: Vec::new(), nglobals, nmutexes, heap_main, atexit: None, fail_percent, fate: BTreeMap::new(), inversion: Vec::new(), syncs: Vec::new(), once_g: None, sem_init: 0, barrier_n: 0, shrink: 0 }
    }

    fn want(&mut self) -> Want {
        if self.rng.chance(self.fail_percent) {
            Want::MayFail
        } else {
            Want::Safe
        }
    }

    fn build(&mut self) {
        let ntop = self.rng.pick(&[1, 2, 2, 2, 3, 3, 3]);
        let nested = self.rng.chance(if ntop == 3 { 20 } else { 40 });
        // Scenarios want several threads, and programs with one are the likeliest to fit.
        let ntop = if !self.syncs.is_empty() && ntop == 1 && self.rng.chance(50) { 2 } else { ntop };
        let (ntop, nested) = match self.shrink {
            0..=3 => (ntop, nested),
            4 => (ntop, false),
            5 => (ntop.min(2), false),
            _ => (1, false),
        };
        // Thread ids: 1..=ntop are main's, ntop+1 (if nested) is a child of one of them.
        let mut main = Thread { id: 0, creator: 0, body: vec![], end: End::Return, heap: HeapVia::None, own: false, publishes: false, local_src: vec![] };
        main.end = match self.rng.below(100) {
            0..=49 => End::Return,
            50..=71 => End::PthreadExit,
            _ => End::Exit(self.rng.pick(&[0, 1, 3])),
        };
        if main.end != End::PthreadExit && self.rng.chance(25) {
            let g = self.rng.below(self.nglobals);
            let w = self.want();
            self.atexit = Some((g, w, 0));
        }
        self.threads.push(main);
        for id in 1..=ntop {
            let t = self.new_thread(id, 0);
            self.threads.push(t);
        }
        let parent = if nested { Some(1 + self.rng.below(ntop)) } else { None };
        if let Some(p) = parent {
            let id = ntop + 1;
            let t = self.new_thread(id, p);
            self.threads.push(t);
        }
        // Fates.
        for id in 1..self.threads.len() {
            let joined = if self.threads[id].creator == 0 { 54 } else { 39 };
            let f = match self.rng.below(100) {
                x if x <= joined => 0,
                x if x <= joined + (99 - joined) / 2 => 1,
                _ => 2,
            };
            self.fate.insert(id, f);
        }
        // Sometimes two threads (main included) nest the two mutexes in opposite orders.
        if self.nmutexes == 2 && self.rng.chance(30) {
            let n = self.threads.len();
            let a = self.rng.below(n);
            let mut b = self.rng.below(n - 1);
            if b >= a {
                b += 1;
            }
            self.inversion = vec![a, b];
        }
        // Bodies: threads first (main's body reads what they write).
        for id in 1..self.threads.len() {
            self.thread_body(id);
        }
        self.main_body();
        for s in self.syncs.clone() {
            self.add_sync(s);
        }
        self.resolve();
    }

    fn new_thread(&mut self, id: usize, creator: usize) -> Thread {
        let end = match self.rng.below(100) {
            0..=49 => End::Return,
            50..=74 => End::PthreadExit,
            75..=93 => End::Exit(self.rng.pick(&[0, 2, 5])),
            _ => End::UnderscoreExit(self.rng.pick(&[0, 4])),
        };
        let heap = if self.heap_main && self.rng.chance(70) {
            if creator == 0 && self.rng.chance(50) {
                HeapVia::Arg
            } else {
                HeapVia::Global
            }
        } else {
            HeapVia::None
        };
        let own = self.rng.chance(18);
        let publishes = own && self.rng.chance(45);
        Thread { id, creator, body: vec![], end, heap, own, publishes, local_src: vec![] }
    }

    fn locs(&self, t: usize) -> Vec<Loc> {
        let th = &self.threads[t];
        let mut v: Vec<Loc> = (0..self.nglobals).map(Loc::G).collect();
        if th.heap != HeapVia::None || (t == 0 && self.heap_main) {
            v.extend((0..2).map(Loc::H));
        }
        if th.own {
            v.extend((0..OWN_CELLS).map(Loc::O));
        }
        v
    }

    fn loc(&mut self, t: usize) -> Loc {
        let v = self.locs(t);
        // Globals twice as likely as each other location, so that threads meet.
        let globals: Vec<Loc> = v.iter().copied().filter(|l| matches!(l, Loc::G(_))).collect();
        if self.rng.chance(55) {
            self.rng.pick(&globals)
        } else {
            self.rng.pick(&v)
        }
    }

    fn new_local(&mut self, t: usize, src: Option<Loc>) -> usize {
        let th = &mut self.threads[t];
        th.local_src.push(src);
        th.local_src.len()
    }

    /// A statement without locks, creation or ends.
    fn simple(&mut self, t: usize, allow_branch: bool) -> Vec<St> {
        let nlocals = self.threads[t].local_src.len();
        let r = self.rng.below(100);
        match r {
            0..=11 if allow_branch && nlocals > 0 => {
                let r = 1 + self.rng.below(nlocals);
                let v = self.rng.pick(&[0, 1, 2]);
                let body = self.simple(t, false);
                vec![St::If { r, v, body }]
            }
            0..=34 => {
                let loc = self.loc(t);
                let l = self.new_local(t, Some(loc));
                let mut v = vec![St::Read { r: l, loc }];
                if self.rng.chance(55) {
                    let want = self.want();
                    v.push(St::AssertNe { r: l, want, c: 0 });
                }
                v
            }
            35..=59 => {
                let loc = self.loc(t);
                if nlocals > 0 && self.rng.chance(30) {
                    let r = 1 + self.rng.below(nlocals);
                    vec![St::WriteLocal { loc, r }]
                } else {
                    vec![St::WriteConst { loc, v: self.rng.pick(&[1, 2, 3]) }]
                }
            }
            60..=67 => vec![St::Incr { loc: self.loc(t) }],
            68..=79 if allow_branch && nlocals > 0 => {
                let r = 1 + self.rng.below(nlocals);
                let v = self.rng.pick(&[0, 1, 2]);
                let body = self.simple(t, false);
                vec![St::If { r, v, body }]
            }
            80..=89 if nlocals >= 2 => {
                let a = 1 + self.rng.below(nlocals);
                let mut b = 1 + self.rng.below(nlocals);
                if b == a {
                    b = if a > 1 { a - 1 } else { a + 1 };
                }
                let want = self.want();
                vec![St::AssertSumNe { a: a.min(b), b: a.max(b), want, c: 0 }]
            }
            _ if self.publisher_other_than(t).is_some() && self.rng.chance(50) => {
                let l = self.new_local(t, None);
                let mut v = vec![St::ReadPub { r: l, cell: self.rng.below(OWN_CELLS) }];
                if self.rng.chance(60) {
                    let want = self.want();
                    v.push(St::AssertNe { r: l, want, c: 0 });
                }
                v
            }
            _ => {
                let loc = self.loc(t);
                vec![St::WriteConst { loc, v: self.rng.pick(&[1, 2, 3]) }]
            }
        }
    }

    fn publisher_other_than(&self, t: usize) -> Option<usize> {
        self.threads.iter().find(|th| th.publishes && th.id != t).map(|th| th.id)
    }

    /// One statement at top level of a thread body or inside a lock (`held`).
    fn stmt(&mut self, t: usize, held: &[usize]) -> Vec<St> {
        let free: Vec<usize> = (0..self.nmutexes).filter(|m| !held.contains(m)).collect();
        let r = self.rng.below(100);
        if !free.is_empty() && r < 30 && held.len() < 2 {
            let m = self.rng.pick(&free);
            let n = if held.is_empty() { 1 + self.rng.below(2) } else { 1 };
            let mut body = Vec::new();
            let mut inner = held.to_vec();
            inner.push(m);
            for _ in 0..n {
                if held.is_empty() && self.rng.chance(30) {
                    body.extend(self.stmt(t, &inner));
                } else {
                    body.extend(self.simple(t, true));
                }
            }
            return vec![St::Lock { m, body }];
        }
        if !free.is_empty() && r < 42 {
            let m = self.rng.pick(&free);
            let body = self.simple(t, false);
            return vec![St::TryLock { m, body }];
        }
        self.simple(t, true)
    }

    fn thread_body(&mut self, t: usize) {
        let n = match self.threads.len() - 1 {
            1 => self.rng.pick(&[2, 3, 3, 4, 5]),
            2 => self.rng.pick(&[1, 2, 2, 3, 3, 4]),
            3 => self.rng.pick(&[1, 1, 2, 2]),
            _ => self.rng.pick(&[1, 1, 2]),
        };
        // Room for the scenario's statements.
        let n: usize = match (self.syncs.is_empty(), self.threads.len() - 1) {
            (true, _) => n,
            (false, 1) => n.div_ceil(2) >> self.shrink.min(3),
            (false, _) => (n / 2) >> self.shrink.min(3),
        };
        if let Some(inv) = self.inversion.iter().position(|&x| x == t) {
            // One of the two threads that take m0 and m1 in opposite orders.
            let (a, b) = if inv == 0 { (0, 1) } else { (1, 0) };
            let inner = self.simple(t, false);
            let body = vec![St::Lock { m: a, body: vec![St::Lock { m: b, body: inner }] }];
            self.threads[t].body.extend(body);
        }
        let mut body = std::mem::take(&mut self.threads[t].body);
        // Children of this thread (the nested one).
        let children: Vec<usize> = self.threads.iter().filter(|c| c.id != t && c.creator == t && c.id != 0).map(|c| c.id).collect();
        let create_at = if children.is_empty() { 0 } else { self.rng.below(n + 1) };
        for i in 0..n {
            if i == create_at {
                self.creates(&children, &mut body);
            }
            body.extend(self.stmt(t, &[]));
        }
        if create_at == n {
            self.creates(&children, &mut body);
        }
        if self.threads[t].publishes {
            // Publish after the first half of the body.
            let at = body.len() / 2;
            body.insert(at, St::Publish);
        }
        for &c in &children {
            if self.fate[&c] == 0 {
                body.push(St::Join { t: c });
                if self.rng.chance(40) {
                    let loc = Loc::G(self.rng.below(self.nglobals));
                    let want = self.want();
                    body.push(St::Check { loc, want, c: 0 });
                }
            }
        }
        // An early end on a value read, sometimes.
        let nlocals = self.threads[t].local_src.len();
        if nlocals > 0 && self.rng.chance(12) {
            let r = 1 + self.rng.below(nlocals);
            let end = if self.rng.chance(50) { End::PthreadExit } else { End::Exit(7) };
            let at = self.rng.below(body.len() + 1);
            // Not before the read it tests (the local would be 0 always): put it last.
            let at = at.max(body.iter().position(|s| matches!(s, St::Read { r: x, .. } | St::ReadPub { r: x, .. } if *x == r)).map(|p| p + 1).unwrap_or(body.len()));
            let v = self.rng.pick(&[0, 1, 2]);
            body.insert(at.min(body.len()), St::EndIf { r, v, end });
        }
        self.threads[t].body = body;
    }

    fn creates(&mut self, children: &[usize], body: &mut Vec<St>) {
        for &c in children {
            body.push(St::Create { t: c });
            if self.fate[&c] == 1 {
                body.push(St::Detach { t: c });
            }
        }
    }

    fn main_body(&mut self) {
        let mut body = Vec::new();
        let top: Vec<usize> = self.threads.iter().filter(|c| c.id != 0 && c.creator == 0).map(|c| c.id).collect();
        // Before the threads: maybe initialise the heap block and a global.
        if self.heap_main && self.rng.chance(50) {
            body.push(St::WriteConst { loc: Loc::H(self.rng.below(2)), v: self.rng.pick(&[1, 2]) });
        }
        if self.rng.chance(25) {
            body.push(St::WriteConst { loc: Loc::G(self.rng.below(self.nglobals)), v: self.rng.pick(&[1, 2, 3]) });
        }
        let mut late_detach = Vec::new();
        for &c in &top {
            body.push(St::Create { t: c });
            if self.fate[&c] == 1 {
                if self.rng.chance(70) {
                    body.push(St::Detach { t: c });
                } else {
                    late_detach.push(c);
                }
            }
            if self.rng.chance(20) {
                body.extend(self.simple(0, false));
            }
        }
        // Between the creates and the joins.
        if let Some(inv) = self.inversion.iter().position(|&x| x == 0) {
            let (a, b) = if inv == 0 { (0, 1) } else { (1, 0) };
            let inner = self.simple(0, false);
            body.push(St::Lock { m: a, body: vec![St::Lock { m: b, body: inner }] });
        }
        let n = self.rng.pick(&[0, 0, 1, 1, 2]);
        let n = if self.syncs.is_empty() { n } else { (n / 2) >> self.shrink.min(3) };
        for _ in 0..n {
            body.extend(self.stmt(0, &[]));
        }
        for c in late_detach {
            body.push(St::Detach { t: c });
        }
        let mut joins: Vec<usize> = top.iter().copied().filter(|c| self.fate[c] == 0).collect();
        if joins.len() == 2 && self.rng.chance(50) {
            joins.swap(0, 1);
        }
        for c in joins {
            body.push(St::Join { t: c });
        }
        // After the joins: check globals.
        let n = self.rng.pick(&[0, 1, 1, 2]);
        for _ in 0..n {
            let loc = if self.heap_main && self.rng.chance(25) { Loc::H(self.rng.below(2)) } else { Loc::G(self.rng.below(self.nglobals)) };
            let want = self.want();
            body.push(St::Check { loc, want, c: 0 });
        }
        self.threads[0].body = body;
    }

    // ---- synchronisation scenarios --------------------------------------------------------

    /// `k` distinct threads (main included), in random order.
    fn distinct_threads(&mut self, k: usize) -> Vec<usize> {
        let mut all: Vec<usize> = (0..self.threads.len()).collect();
        let mut v = Vec::new();
        for _ in 0..k.min(all.len()) {
            let i = self.rng.below(all.len());
            v.push(all.remove(i));
        }
        v
    }

    /// Insert `sts` at the top level of thread `t`'s body: after its creates (if it has any),
    /// before its first join.
    fn insert(&mut self, t: usize, sts: Vec<St>) {
        let body = &self.threads[t].body;
        let lo = body.iter().rposition(|s| matches!(s, St::Create { .. })).map(|p| p + 1).unwrap_or(0);
        let hi = body.iter().position(|s| matches!(s, St::Join { .. })).unwrap_or(body.len()).max(lo);
        let at = lo + self.rng.below(hi - lo + 1);
        let body = &mut self.threads[t].body;
        for (i, st) in sts.into_iter().enumerate() {
            body.insert(at + i, st);
        }
    }

    /// Main's statements before its creates (initialisations).
    fn insert_first_in_main(&mut self, st: St) {
        self.threads[0].body.insert(0, st);
    }

    /// A read of a global into a new local, and sometimes an assertion on it.
    fn read_global(&mut self, t: usize, g: usize) -> Vec<St> {
        let loc = Loc::G(g);
        let r = self.new_local(t, Some(loc));
        let mut v = vec![St::Read { r, loc }];
        if self.rng.chance(70) {
            let want = self.want();
            v.push(St::AssertNe { r, want, c: 0 });
        }
        v
    }

    /// Whether to add an optional part of a scenario (`percent`, less often in smaller draws).
    fn extra(&mut self, percent: u32) -> bool {
        self.shrink < 3 && self.rng.chance(percent >> self.shrink)
    }

    fn write_global(&mut self, g: usize) -> St {
        if self.rng.chance(30) {
            St::Incr { loc: Loc::G(g) }
        } else {
            St::WriteConst { loc: Loc::G(g), v: self.rng.pick(&[1, 2, 3]) }
        }
    }

    fn add_sync(&mut self, s: Sync) {
        let n = self.threads.len();
        match s {
            Sync::Cond => {
                let two = n >= 3 && self.rng.chance(60);
                let roles = self.distinct_threads(if two { 3 } else { 2 });
                let m = self.rng.below(2);
                let g = self.rng.below(self.nglobals);
                // The signaller writes g before setting the predicate; the waiters read it.
                let message = self.extra(50);
                for &w in &roles[1..] {
                    let pred = self.rng.chance(75);
                    let body = if message || self.extra(40) { self.read_global(w, g) } else { vec![] };
                    self.insert(w, vec![St::CondWait { m, pred, body }]);
                }
                let broadcast = self.rng.chance(if two { 50 } else { 20 });
                let at = match self.rng.below(100) {
                    0..=59 => SignalAt::Under,
                    60..=84 => SignalAt::After,
                    _ => SignalAt::Before,
                };
                let body = if message { vec![self.write_global(g)] } else { vec![] };
                self.insert(roles[0], vec![St::CondSignal { m, broadcast, at, body }]);
            }
            Sync::Sem => {
                let v = self.rng.pick(&[0, 0, 0, 1, 1, 2, 2]);
                self.sem_init = v;
                self.insert_first_in_main(St::SemInit { v });
                let k = if n >= 3 && self.rng.chance(35) { 3 } else { 2 };
                let roles = self.distinct_threads(k);
                let g = self.rng.below(self.nglobals);
                for (i, &t) in roles.iter().enumerate() {
                    // 0 post, 1 wait, 2 wait..post, 3 trywait..post, 4 trywait (keeps it)
                    let role = if v == 0 && i == 0 {
                        if self.rng.chance(90) { 0 } else { 4 }
                    } else if v == 0 && i == 1 {
                        self.rng.pick(&[1, 1, 1, 1, 2, 3])
                    } else {
                        self.rng.pick(&[0, 1, 2, 2, 2, 3, 3, 4])
                    };
                    let sts = match role {
                        0 if self.extra(70) => vec![self.write_global(g), St::SemPost],
                        0 => vec![St::SemPost],
                        1 => {
                            let mut v = vec![St::SemWait];
                            if self.extra(80) {
                                v.extend(self.read_global(t, g));
                            }
                            v
                        }
                        2 => vec![St::SemWait, St::Incr { loc: Loc::G(g) }, St::SemPost],
                        3 => vec![St::SemTry { post: true, body: vec![St::Incr { loc: Loc::G(g) }] }],
                        _ => {
                            let body = self.read_global(t, g);
                            vec![St::SemTry { post: false, body }]
                        }
                    };
                    self.insert(t, sts);
                }
            }
            Sync::Once => {
                let g = self.rng.below(self.nglobals);
                self.once_g = Some(g);
                let k = if n >= 3 && self.rng.chance(35) { 3 } else { 2 };
                for t in self.distinct_threads(k) {
                    let mut sts = vec![St::Once];
                    if self.extra(60) {
                        sts.extend(self.read_global(t, g));
                    }
                    self.insert(t, sts);
                }
            }
            Sync::Barrier => {
                let k = if n >= 3 && self.rng.chance(40) { 3 } else { 2 };
                // One draw (as `chance(12)` was): short of a thread, or one thread more than
                // the count (an arrival then waits for the release: the barrier is ordered).
                let draw = self.rng.next_u64() % 100;
                let (short, over) = (draw < 12, (12..24).contains(&draw));
                self.barrier_n = k as u32 + u32::from(short) - u32::from(over);
                self.insert_first_in_main(St::BarrierInit { n: self.barrier_n });
                let roles = self.distinct_threads(k);
                let g = self.rng.below(self.nglobals);
                for (i, &t) in roles.iter().enumerate() {
                    let mut sts = Vec::new();
                    // Writes before the barrier, reads after it.
                    if (i == 0 && self.shrink < 2) || self.extra(40) {
                        sts.push(self.write_global(g));
                    }
                    sts.push(St::BarrierWait);
                    if (i > 0 && self.shrink < 2) || self.extra(40) {
                        sts.extend(self.read_global(t, g));
                    }
                    self.insert(t, sts);
                }
            }
            Sync::RwLock => {
                let k = if n >= 3 && self.rng.chance(30) { 3 } else { 2 };
                let roles = self.distinct_threads(k);
                let g = self.rng.below(self.nglobals);
                let nested = self.rng.chance(20);
                let mut writers = 0;
                for (i, &t) in roles.iter().enumerate() {
                    let (write, try_) = match self.rng.below(100) {
                        0..=39 => (true, false),
                        40..=74 => (false, false),
                        75..=89 => (false, true),
                        _ => (true, true),
                    };
                    // Mostly at least one writer.
                    let write = write || (i + 1 == roles.len() && writers == 0 && self.rng.chance(80));
                    writers += usize::from(write);
                    let mut body = if write { vec![self.write_global(g)] } else { self.read_global(t, g) };
                    let m = self.rng.below(2);
                    let st = if nested && i == 1 {
                        // The mutex inside the rwlock (the first thread: the rwlock inside the mutex).
                        body = vec![St::Lock { m: 0, body }];
                        St::RwLock { write, try_, body }
                    } else {
                        St::RwLock { write, try_, body }
                    };
                    let st = if nested && i == 0 {
                        St::Lock { m: 0, body: vec![st] }
                    } else if !nested && self.rng.chance(10) {
                        St::Lock { m, body: vec![st] }
                    } else {
                        st
                    };
                    self.insert(t, vec![st]);
                }
            }
            Sync::Recursive => {
                let k = if self.rng.chance(70) { 2 } else { 1 };
                let roles = self.distinct_threads(k);
                let g = self.rng.below(self.nglobals);
                for (i, &t) in roles.iter().enumerate() {
                    let st = if i == 1 && self.rng.chance(30) {
                        // Another thread tries it.
                        St::RecTry { body: vec![self.write_global(g)] }
                    } else {
                        let inner_body = if self.rng.chance(50) { vec![self.write_global(g)] } else { self.read_global(t, g) };
                        let inner = if self.rng.chance(30) {
                            St::RecTry { body: inner_body }
                        } else {
                            St::RecLock { unlock: !self.rng.chance(10), body: inner_body }
                        };
                        let mut body = vec![];
                        if self.extra(50) {
                            body.push(self.write_global(g));
                        }
                        body.push(inner);
                        St::RecLock { unlock: true, body }
                    };
                    self.insert(t, vec![st]);
                }
            }
            Sync::Spin => {
                let roles = self.distinct_threads(2);
                let (spinner, setter) = (roles[0], roles[1]);
                let g = self.rng.below(self.nglobals);
                let message = self.extra(50);
                let mut spin = vec![St::SpinWait { f: 0 }];
                if message {
                    spin.extend(self.read_global(spinner, g));
                }
                match self.rng.below(100) {
                    0..=69 => {
                        let mut set = Vec::new();
                        if message {
                            set.push(self.write_global(g));
                        }
                        set.push(St::SpinSet { f: 0 });
                        self.insert(setter, set);
                    }
                    70..=87 => {
                        // Set only on a value read.
                        let x = self.rng.below(self.nglobals);
                        let r = self.new_local(setter, Some(Loc::G(x)));
                        let v = self.rng.pick(&[0, 0, 1, 2]);
                        self.insert(setter, vec![St::Read { r, loc: Loc::G(x) }, St::If { r, v, body: vec![St::SpinSet { f: 0 }] }]);
                    }
                    88..=93 => {} // nobody sets it
                    _ => {
                        // The setter spins on sf1 first, which the spinner sets after its spin.
                        self.insert(setter, vec![St::SpinWait { f: 1 }, St::SpinSet { f: 0 }]);
                        spin.push(St::SpinSet { f: 1 });
                    }
                }
                self.insert(spinner, spin);
            }
            Sync::Atomics => {
                let words = if self.rng.chance(30) { 2 } else { 1 };
                let k = if n >= 3 && self.rng.chance(40) { 3 } else { 2 };
                let roles = self.distinct_threads(k);
                let g = self.rng.below(self.nglobals);
                // Who makes the words' values known first: main before the creates (an atomic
                // or a plain store), or nobody (updates find an unknown value until a thread
                // stores; half of those times nobody ever stores).
                let mut no_store = false;
                for w in 0..words {
                    match self.rng.below(100) {
                        0..=34 => {
                            let v = self.rng.pick(&[0, 0, 1]);
                            self.insert_first_in_main(St::AtomStore { w, plain: false, v });
                        }
                        35..=54 => {
                            let v = self.rng.pick(&[0, 0, 1]);
                            self.insert_first_in_main(St::AtomStore { w, plain: true, v });
                        }
                        _ => no_store |= w == 0 && self.rng.chance(50),
                    }
                }
                for &t in &roles {
                    let nops = match self.shrink {
                        0 => self.rng.pick(&[1, 2, 2, 3]),
                        1 => self.rng.pick(&[1, 1, 2]),
                        _ => 1,
                    };
                    let mut sts = Vec::new();
                    for _ in 0..nops {
                        let w = self.rng.below(words);
                        let op = self.atomic_op(t, w, g, no_store && w == 0);
                        sts.extend(op);
                    }
                    self.insert(t, sts);
                }
                // Main reads the word after its joins, sometimes.
                if self.extra(30) {
                    let r = self.new_local(0, Some(Loc::A(0)));
                    let want = self.want();
                    let main = &mut self.threads[0].body;
                    main.push(St::AtomLoad { r, w: 0 });
                    main.push(St::AssertNe { r, want, c: 0 });
                }
            }
        }
    }

    /// Sometimes an assertion on local `r` (`percent` of the time).
    fn maybe_assert(&mut self, r: usize, percent: u32) -> Vec<St> {
        if self.rng.chance(percent) {
            let want = self.want();
            vec![St::AssertNe { r, want, c: 0 }]
        } else {
            vec![]
        }
    }

    /// One operation of the `atomics` scenario on `a{w}` by thread `t` (`g`: the global a lock
    /// protects; `no_store`: nobody stores `a{w}`, so that every update finds an unknown value).
    fn atomic_op(&mut self, t: usize, w: usize, g: usize, no_store: bool) -> Vec<St> {
        match self.rng.below(100) {
            0..=21 => {
                // A compare-exchange "lock": 0 -> 1, then a write, then the release.
                let e = self.new_local(t, Some(Loc::A(w)));
                let ok = self.new_local(t, Some(Loc::Bool));
                let release = match self.rng.below(if no_store { 2 } else { 3 }) {
                    0 => St::Rmw { w, op: RmwOp::Xchg, v: 0, r: None },
                    1 => St::Rmw { w, op: RmwOp::Sub, v: 1, r: None },
                    _ => St::AtomStore { w, plain: false, v: 0 },
                };
                let body = vec![self.write_global(g), release];
                vec![St::Cas { w, e, exp: 0, des: 1, ok: Some(ok) }, St::If { r: ok, v: 1, body }]
            }
            22..=47 => {
                let (exp, des) = self.rng.pick(&[(0, 1), (0, 1), (1, 2), (0, 0), (1, 1), (1, 0), (2, 1)]);
                let e = self.new_local(t, Some(Loc::A(w)));
                let ok = if self.rng.chance(75) { Some(self.new_local(t, Some(Loc::Bool))) } else { None };
                let mut v = vec![St::Cas { w, e, exp, des, ok }];
                match (ok, self.rng.below(100)) {
                    (Some(ok), 0..=39) => v.extend(self.maybe_assert(ok, 100)),
                    (Some(ok), 40..=64) => {
                        let on = self.rng.pick(&[0, 1]);
                        let body = vec![self.write_global(g)];
                        v.push(St::If { r: ok, v: on, body });
                    }
                    _ => v.extend(self.maybe_assert(e, 60)),
                }
                v
            }
            48..=63 => {
                let val = self.rng.pick(&[0, 1, 1]);
                let r = if self.rng.chance(70) { Some(self.new_local(t, Some(Loc::A(w)))) } else { None };
                let mut v = vec![St::Rmw { w, op: RmwOp::Xchg, v: val, r }];
                if let Some(r) = r {
                    v.extend(self.maybe_assert(r, 50));
                }
                v
            }
            64..=81 => {
                let d = self.rng.pick(&[0, 0, 1]);
                let op = if self.rng.chance(35) { RmwOp::Sub } else { RmwOp::Add };
                let r = if self.rng.chance(70) { Some(self.new_local(t, Some(Loc::A(w)))) } else { None };
                let mut v = vec![St::Rmw { w, op, v: d, r }];
                if let Some(r) = r {
                    v.extend(self.maybe_assert(r, 50));
                }
                v
            }
            82..=89 if !no_store => vec![St::AtomStore { w, plain: false, v: self.rng.pick(&[0, 1, 2]) }],
            _ => {
                let r = self.new_local(t, Some(Loc::A(w)));
                let mut v = vec![St::AtomLoad { r, w }];
                if self.rng.chance(35) {
                    let on = self.rng.pick(&[0, 1]);
                    let body = vec![self.write_global(g)];
                    v.push(St::If { r, v: on, body });
                } else {
                    v.extend(self.maybe_assert(r, 60));
                }
                v
            }
        }
    }

    // ---- values -------------------------------------------------------------------------

    /// Every value each location may hold (an over-approximation), and the values in the
    /// published blocks.
    fn values(&self) -> (BTreeMap<Loc, BTreeSet<i32>>, BTreeSet<i32>) {
        let mut vals: BTreeMap<Loc, BTreeSet<i32>> = BTreeMap::new();
        let mut own_by: BTreeMap<usize, BTreeSet<i32>> = BTreeMap::new();
        fn walk(sts: &[St], t: usize, vals: &mut BTreeMap<Loc, BTreeSet<i32>>, own_by: &mut BTreeMap<usize, BTreeSet<i32>>) {
            for s in sts {
                let mut add = |loc: Loc, vs: &[i32]| match loc {
                    Loc::O(_) => own_by.entry(t).or_default().extend(vs),
                    l => vals.entry(l).or_default().extend(vs),
                };
                match s {
                    St::WriteConst { loc, v } => add(*loc, &[*v]),
                    St::WriteLocal { loc, .. } => add(*loc, &[1, 2, 3, 4]),
                    St::Incr { loc } => add(*loc, &[1, 2, 3, 4]),
                    St::AtomStore { w, v, .. } => add(Loc::A(*w), &[*v]),
                    // The expected value too: the local `e` holds it when the exchange succeeds.
                    St::Cas { w, exp, des, .. } => add(Loc::A(*w), &[*exp, *des]),
                    St::Rmw { w, op: RmwOp::Xchg, v, .. } => add(Loc::A(*w), &[*v]),
                    // Adds and subtracts: widened below.
                    St::Rmw { .. } => {}
                    _ => {
                        if let Some(body) = s.body() {
                            walk(body, t, vals, own_by)
                        }
                    }
                }
            }
        }
        for th in &self.threads {
            walk(&th.body, th.id, &mut vals, &mut own_by);
        }
        if let Some(g) = self.once_g {
            // init_once0: g = g + 1
            vals.entry(Loc::G(g)).or_default().extend([1, 2, 3, 4]);
        }
        for v in vals.values_mut() {
            v.insert(0);
        }
        // The atomics' words: every value plus up to as many as the adds and minus up to as
        // many as the subtracts of 1 (an over-approximation).
        fn steps(sts: &[St], out: &mut BTreeMap<(usize, bool), i32>) {
            for s in sts {
                if let St::Rmw { w, op: op @ (RmwOp::Add | RmwOp::Sub), v, .. } = s {
                    *out.entry((*w, *op == RmwOp::Add)).or_default() += *v;
                }
                if let Some(body) = s.body() {
                    steps(body, out);
                }
            }
        }
        let mut by: BTreeMap<(usize, bool), i32> = BTreeMap::new();
        for th in &self.threads {
            steps(&th.body, &mut by);
        }
        for w in 0..2 {
            let (up, down) = (by.get(&(w, true)).copied().unwrap_or(0), by.get(&(w, false)).copied().unwrap_or(0));
            if up + down > 0 {
                vals.entry(Loc::A(w)).or_insert_with(|| BTreeSet::from([0]));
            }
            if let Some(set) = vals.get_mut(&Loc::A(w)) {
                let base: Vec<i32> = set.iter().copied().collect();
                set.extend(base.iter().flat_map(|b| (-down..=up).map(move |d| b + d)));
            }
        }
        vals.insert(Loc::Bool, BTreeSet::from([0, 1]));
        let mut published = BTreeSet::from([0]);
        for th in &self.threads {
            if th.publishes {
                published.extend(own_by.get(&th.id).cloned().unwrap_or_default());
            }
        }
        // Own cells: per thread, but a local read from O(i) is resolved with its thread's values.
        for (t, v) in own_by {
            vals.insert(Loc::O(100 + t), v);
        }
        (vals, published)
    }

    fn resolve(&mut self) {
        let (vals, published) = self.values();
        let possible = |t: usize, src: Option<Loc>| -> BTreeSet<i32> {
            let mut s = match src {
                Some(Loc::O(_)) => vals.get(&Loc::O(100 + t)).cloned().unwrap_or_default(),
                Some(l) => vals.get(&l).cloned().unwrap_or_default(),
                None => published.clone(),
            };
            // A local is 0 until its read happens (the read may be skipped).
            s.insert(0);
            s
        };
        let mut picks: Vec<u64> = Vec::new();
        for _ in 0..256 {
            picks.push(self.rng.next_u64());
        }
        let mut k = 0usize;
        let mut choose = |set: &BTreeSet<i32>, want: Want, safe: i32| -> i32 {
            k += 1;
            match want {
                Want::Safe => safe,
                Want::MayFail => {
                    let v: Vec<i32> = set.iter().copied().collect();
                    // Prefer nonzero values (0 is the initial value: failing on it is too easy).
                    let nz: Vec<i32> = v.iter().copied().filter(|x| *x != 0).collect();
                    let from = if nz.is_empty() || picks[k % picks.len()].is_multiple_of(4) { &v } else { &nz };
                    from[(picks[(k * 7) % picks.len()] % from.len() as u64) as usize]
                }
            }
        };
        fn fix(sts: &mut [St], t: usize, src: &[Option<Loc>], possible: &dyn Fn(usize, Option<Loc>) -> BTreeSet<i32>, choose: &mut dyn FnMut(&BTreeSet<i32>, Want, i32) -> i32) {
            for s in sts {
                match s {
                    St::AssertNe { r, want, c } => *c = choose(&possible(t, src[*r - 1]), *want, SAFE),
                    St::AssertSumNe { a, b, want, c } => {
                        let (pa, pb) = (possible(t, src[*a - 1]), possible(t, src[*b - 1]));
                        let sums: BTreeSet<i32> = pa.iter().flat_map(|x| pb.iter().map(move |y| x + y)).collect();
                        *c = choose(&sums, *want, 2 * SAFE + 1);
                    }
                    St::Check { loc, want, c } => *c = choose(&possible(t, Some(*loc)), *want, SAFE),
                    _ => {
                        if let Some(body) = s.body_mut() {
                            fix(body, t, src, possible, choose)
                        }
                    }
                }
            }
        }
        for i in 0..self.threads.len() {
            let src = self.threads[i].local_src.clone();
            let mut body = std::mem::take(&mut self.threads[i].body);
            fix(&mut body, i, &src, &possible, &mut choose);
            self.threads[i].body = body;
        }
        if let Some((g, want, _)) = self.atexit {
            let c = choose(&possible(0, Some(Loc::G(g))), want, SAFE);
            self.atexit = Some((g, want, c));
        }
    }

    // ---- size ---------------------------------------------------------------------------

    /// The number of interleavings of the program's visible operations when every thread runs
    /// its longest path (both sides of every branch), every trylock succeeds without holding its
    /// mutex, no assertion fails and nothing ends the process early: a thread's operations become
    /// enabled when it is created, a join when the joined thread has done all of its, a lock when
    /// no other thread holds the mutex. Counted by memoised search over the vector of positions
    /// (and the scenarios' state). The real count (the oracle's) is smaller in practice, since
    /// failures, failed trylocks and the process's end only remove interleavings, but for the
    /// kills an end adds (counted here as operations of the ender, one per other thread, even
    /// joined ones); the campaign reports any program whose count exceeds its model's.
    ///
    /// The scenarios' operations are modelled as the runtime implements them
    /// (docs/src/synchronisation.md): each lock and unlock of an internal lock (a
    /// condition variable's list, a semaphore's, barrier's, rwlock's or once control's lock) is
    /// an operation; a wait takes its gate (one operation), releases the locks, waits until a
    /// wake releases it (the gate's second lock, blocked until then), releases the gate and
    /// relocks; a signal to several waiters is a choice (one branch per waiter, one operation
    /// more); a broadcast releases each waiter's gate (one operation each); a trylock (of the
    /// semaphore, the rwlock) is taken when free; a recursive mutex relocked by its owner is no
    /// operation; a spin-wait reads its flag once or twice (an iteration each) and, when the
    /// second read what the first read, the execution ends there (discarded or a livelock: the
    /// end, then one operation per other thread, its kill, as at an `exit`; the others may move
    /// until then, and a flag set meanwhile changes nothing). An `__atomic_*` builtin of the
    /// `atomics` scenario is one access, one operation (it never blocks, and the value model's
    /// labels only merge interleavings into fewer traces).
    fn estimate(&self) -> u64 {
        #[derive(Clone, Copy, Debug)]
        enum Op {
            Plain,
            Create(usize),
            Join(usize),
            Lock(usize),
            Unlock(usize),
            /// Takes the waiter's gate and joins the queue's waiters.
            Enq(usize),
            /// The gate's second lock: enabled once a wake released the thread.
            Await(usize),
            /// Signal (false) or broadcast (true) the queue: nothing when nobody waits.
            Wake(usize, bool),
            SetFlag(usize),
            // No operation: decided by what the thread holds or has just read.
            Jump(usize),
            IfFlag(usize, usize),
            SemTake(usize),
            SemAdd,
            BarArrive(usize),
            /// Write or read (in its slot): taken when free, then jump.
            RwTry(bool, usize, usize),
            /// The writer's release; a reader's (its slot), which skips the writers' wake-up
            /// (to the target) unless it emptied its slot while writers wait.
            RwRelease(Option<(usize, usize)>),
            /// A writer starts (true) or stops waiting.
            WriterWaits(bool),
            OnceTest(usize),
            Discard,
        }
        // Objects (locks) besides m0 and m1, queues and flags.
        const RM: usize = 2;
        const CL: usize = 3;
        const SL: usize = 4;
        const BL: usize = 5;
        const RL: usize = 6;
        const OL: usize = 7;
        const NOBJ: usize = 11;
        const QC: usize = 0;
        const QS: usize = 1;
        const QB: usize = 2;
        // The writers' queue, then the readers' of each slot.
        const QW: usize = 3;
        const NQ: usize = 8;
        // The estimate models an rwlock as the runtime once built it (4 reader slots of internal
        // locks and condition variables): more steps than its native events, so the estimate
        // stays above the interleavings the oracle runs.
        const SLOTS: usize = 4;
        // An rwlock's reader slot `s`: its lock (slot 0's is RL), its readers' queue.
        fn rl(s: usize) -> usize {
            if s == 0 { RL } else { OL + s }
        }
        fn qr(s: usize) -> usize {
            QW + 1 + s
        }
        const FC: usize = 0;
        const FREE: u8 = u8::MAX;
        let n = self.threads.len();
        let handler_ops = usize::from(self.atexit.is_some());
        let mut ops: Vec<Vec<Op>> = vec![Vec::new(); n];
        fn patch(v: &mut [Op], at: usize, to: usize) {
            v[at] = match v[at] {
                Op::Jump(_) => Op::Jump(to),
                Op::IfFlag(f, _) => Op::IfFlag(f, to),
                Op::SemTake(_) => Op::SemTake(to),
                Op::BarArrive(_) => Op::BarArrive(to),
                Op::RwTry(w, s, _) => Op::RwTry(w, s, to),
                Op::RwRelease(Some((s, _))) => Op::RwRelease(Some((s, to))),
                Op::OnceTest(_) => Op::OnceTest(to),
                o => o,
            };
        }
        fn count(sts: &[St], v: &mut Vec<Op>, end_ops: usize, handler_ops: usize, rec: &mut usize, slot: usize) {
            for s in sts {
                match s {
                    St::Read { .. } | St::WriteConst { .. } | St::WriteLocal { .. } | St::Check { .. } | St::Publish => v.push(Op::Plain),
                    St::Incr { .. } => v.extend([Op::Plain, Op::Plain]),
                    St::ReadPub { .. } => v.extend([Op::Plain, Op::Plain]),
                    St::AssertNe { .. } | St::AssertSumNe { .. } | St::Detach { .. } => {}
                    St::Lock { m, body } => {
                        v.push(Op::Lock(*m));
                        count(body, v, end_ops, handler_ops, rec, slot);
                        v.push(Op::Unlock(*m));
                    }
                    // A trylock never blocks; taken as always succeeding, but holding nothing
                    // (so that others' locks are never blocked by it: more interleavings).
                    St::TryLock { body, .. } => {
                        v.push(Op::Plain);
                        count(body, v, end_ops, handler_ops, rec, slot);
                        v.push(Op::Plain);
                    }
                    St::If { body, .. } => count(body, v, end_ops, handler_ops, rec, slot),
                    St::EndIf { end, .. } => {
                        v.push(Op::Plain);
                        if end.ends_process(false) {
                            v.extend(std::iter::repeat_n(Op::Plain, end_ops + handler_ops));
                        }
                    }
                    St::Create { t } => v.push(Op::Create(*t)),
                    St::Join { t } => v.push(Op::Join(*t)),
                    St::CondWait { m, pred, body } => {
                        v.push(Op::Lock(*m));
                        let top = v.len();
                        if *pred {
                            v.extend([Op::Plain, Op::IfFlag(FC, 0)]);
                        }
                        v.extend([Op::Lock(CL), Op::Enq(QC), Op::Unlock(CL), Op::Unlock(*m), Op::Await(QC), Op::Plain, Op::Lock(*m)]);
                        if *pred {
                            v.push(Op::Jump(top));
                            let out = v.len();
                            patch(v, top + 1, out);
                        }
                        count(body, v, end_ops, handler_ops, rec, slot);
                        v.push(Op::Unlock(*m));
                    }
                    St::CondSignal { m, broadcast, at, body } => {
                        let signal = [Op::Lock(CL), Op::Wake(QC, *broadcast), Op::Unlock(CL)];
                        if *at == SignalAt::Before {
                            v.extend(signal);
                        }
                        v.push(Op::Lock(*m));
                        count(body, v, end_ops, handler_ops, rec, slot);
                        v.push(Op::SetFlag(FC));
                        if *at == SignalAt::Under {
                            v.extend(signal);
                        }
                        v.push(Op::Unlock(*m));
                        if *at == SignalAt::After {
                            v.extend(signal);
                        }
                    }
                    St::SemInit { .. } | St::BarrierInit { .. } => v.extend([Op::Plain, Op::Plain]),
                    St::SemWait => {
                        v.push(Op::Lock(SL));
                        let top = v.len();
                        v.extend([Op::SemTake(0), Op::Enq(QS), Op::Unlock(SL), Op::Await(QS), Op::Plain, Op::Lock(SL), Op::Jump(top)]);
                        let done = v.len();
                        patch(v, top, done);
                        v.push(Op::Unlock(SL));
                    }
                    St::SemPost => v.extend([Op::Lock(SL), Op::SemAdd, Op::Wake(QS, false), Op::Unlock(SL)]),
                    St::SemTry { post, body } => {
                        v.push(Op::Lock(SL));
                        let take = v.len();
                        v.extend([Op::SemTake(0), Op::Unlock(SL), Op::Jump(0)]);
                        let got = v.len();
                        patch(v, take, got);
                        v.push(Op::Unlock(SL));
                        count(body, v, end_ops, handler_ops, rec, slot);
                        if *post {
                            v.extend([Op::Lock(SL), Op::SemAdd, Op::Wake(QS, false), Op::Unlock(SL)]);
                        }
                        let end = v.len();
                        patch(v, take + 2, end);
                    }
                    St::Once => {
                        v.push(Op::Lock(OL));
                        let test = v.len();
                        v.extend([Op::OnceTest(0), Op::Plain, Op::Plain]);
                        let end = v.len();
                        patch(v, test, end);
                        v.push(Op::Unlock(OL));
                    }
                    St::BarrierWait => {
                        v.push(Op::Lock(BL));
                        let arrive = v.len();
                        v.extend([Op::BarArrive(0), Op::Wake(QB, true), Op::Jump(0)]);
                        let wait = v.len();
                        patch(v, arrive, wait);
                        v.extend([Op::Enq(QB), Op::Unlock(BL), Op::Await(QB), Op::Plain, Op::Lock(BL)]);
                        let end = v.len();
                        patch(v, arrive + 2, end);
                        v.push(Op::Unlock(BL));
                    }
                    // rwlock.rs: a reader locks its slot only; a writer every slot, in order.
                    St::RwLock { write: false, try_, body } => {
                        let l = rl(slot);
                        v.push(Op::Lock(l));
                        let top = v.len();
                        v.push(Op::RwTry(false, slot, 0));
                        let skip = if *try_ {
                            v.extend([Op::Unlock(l), Op::Jump(0)]);
                            Some(v.len() - 1)
                        } else {
                            v.extend([Op::Enq(qr(slot)), Op::Unlock(l), Op::Await(qr(slot)), Op::Plain, Op::Lock(l), Op::Jump(top)]);
                            None
                        };
                        let got = v.len();
                        patch(v, top, got);
                        v.push(Op::Unlock(l));
                        count(body, v, end_ops, handler_ops, rec, slot);
                        v.push(Op::Lock(l));
                        let release = v.len();
                        v.push(Op::RwRelease(Some((slot, 0))));
                        if slot == 0 {
                            v.push(Op::Wake(QW, true));
                        } else {
                            v.extend([Op::Unlock(l), Op::Lock(RL), Op::Wake(QW, true), Op::Unlock(RL), Op::Jump(0)]);
                        }
                        let jump = v.len() - 1;
                        let unlock = v.len();
                        patch(v, release, unlock);
                        v.push(Op::Unlock(l));
                        if slot != 0 {
                            let out = v.len();
                            patch(v, jump, out);
                        }
                        if let Some(j) = skip {
                            let end = v.len();
                            patch(v, j, end);
                        }
                    }
                    St::RwLock { write: true, try_, body } => {
                        v.extend((0..SLOTS).map(|s| Op::Lock(rl(s))));
                        let top = v.len();
                        v.push(Op::RwTry(true, slot, 0));
                        let skip = if *try_ {
                            v.extend((0..SLOTS).rev().map(|s| Op::Unlock(rl(s))));
                            v.push(Op::Jump(0));
                            Some(v.len() - 1)
                        } else {
                            v.push(Op::WriterWaits(true));
                            v.extend((1..SLOTS).rev().map(|s| Op::Unlock(rl(s))));
                            v.extend([Op::Enq(QW), Op::Unlock(RL), Op::Await(QW), Op::Plain, Op::Lock(RL)]);
                            v.extend((1..SLOTS).map(|s| Op::Lock(rl(s))));
                            v.extend([Op::WriterWaits(false), Op::Jump(top)]);
                            None
                        };
                        let got = v.len();
                        patch(v, top, got);
                        v.extend((0..SLOTS).rev().map(|s| Op::Unlock(rl(s))));
                        count(body, v, end_ops, handler_ops, rec, slot);
                        v.extend((0..SLOTS).map(|s| Op::Lock(rl(s))));
                        v.push(Op::RwRelease(None));
                        v.extend((0..SLOTS).map(|s| Op::Wake(qr(s), true)));
                        v.push(Op::Wake(QW, true));
                        v.extend((0..SLOTS).rev().map(|s| Op::Unlock(rl(s))));
                        if let Some(j) = skip {
                            let end = v.len();
                            patch(v, j, end);
                        }
                    }
                    St::RecLock { unlock, body } => {
                        if *rec == 0 {
                            v.push(Op::Lock(RM));
                        }
                        *rec += 1;
                        count(body, v, end_ops, handler_ops, rec, slot);
                        if *unlock {
                            *rec -= 1;
                            if *rec == 0 {
                                v.push(Op::Unlock(RM));
                            }
                        }
                    }
                    St::RecTry { body } => {
                        if *rec > 0 {
                            // The owner's: no operation.
                            count(body, v, end_ops, handler_ops, rec, slot);
                        } else {
                            v.push(Op::Plain);
                            count(body, v, end_ops, handler_ops, rec, slot);
                            v.push(Op::Plain);
                        }
                    }
                    St::SpinWait { f } => {
                        let flag = 1 + f;
                        let mut tests = Vec::new();
                        for _ in 0..2 {
                            v.push(Op::Plain);
                            tests.push(v.len());
                            v.push(Op::IfFlag(flag, 0));
                        }
                        // Read the same twice: the end, whatever is written meanwhile, and the
                        // other threads killed (each may move until its kill).
                        v.push(Op::Plain);
                        v.extend(std::iter::repeat_n(Op::Plain, end_ops));
                        v.push(Op::Discard);
                        let out = v.len();
                        for t in tests {
                            patch(v, t, out);
                        }
                    }
                    St::SpinSet { f } => v.push(Op::SetFlag(1 + f)),
                    // One access each (the compare-exchange's expected value is a local).
                    St::AtomStore { .. } | St::AtomLoad { .. } | St::Cas { .. } | St::Rmw { .. } => v.push(Op::Plain),
                }
            }
        }
        // Each thread's rwlock reader slot, from its name by creation path (rwlock.rs).
        let mut names = vec![0u64; n];
        fn creates(sts: &[St], out: &mut Vec<usize>) {
            for s in sts {
                if let St::Create { t } = s {
                    out.push(*t);
                }
                if let Some(body) = s.body() {
                    creates(body, out);
                }
            }
        }
        // (Passes until every creator's name is final: creators may come after their children.)
        for _ in 0..n {
            for th in &self.threads {
                let mut kids = Vec::new();
                creates(&th.body, &mut kids);
                for (nth, c) in kids.into_iter().enumerate() {
                    // The old runtime's thread names by creation path, which chose the slots.
                    names[c] = names[th.id].wrapping_mul(0x9e37_79b9_7f4a_7c15).wrapping_add(nth as u64 + 1);
                }
            }
        }
        let slots: Vec<usize> = names.iter().map(|&x| (x % SLOTS as u64) as usize).collect();
        for th in &self.threads {
            let v = &mut ops[th.id];
            if th.heap == HeapVia::Global {
                v.push(Op::Plain); // h = hp
            }
            if th.id == 0 && self.heap_main && self.threads.iter().any(|c| c.heap == HeapVia::Global) {
                v.push(Op::Plain); // hp = h
            }
            let mut rec = 0;
            count(&th.body, v, n - 1, handler_ops, &mut rec, slots[th.id]);
            if th.own && !th.publishes {
                v.push(Op::Plain); // free(o): a write of the block
            }
            v.push(Op::Plain); // the exit or the end
            if th.end.ends_process(th.id == 0) {
                let h = if matches!(th.end, End::UnderscoreExit(_)) { 0 } else { handler_ops };
                v.extend(std::iter::repeat_n(Op::Plain, n - 1 + h));
            }
        }
        // Where each thread is created: (creator, index of the create in its ops).
        let mut created_at: Vec<Option<(usize, usize)>> = vec![None; n];
        for (t, v) in ops.iter().enumerate() {
            for (i, op) in v.iter().enumerate() {
                if let Op::Create(c) = op {
                    created_at[*c] = Some((t, i));
                }
            }
        }
        let lens: Vec<usize> = ops.iter().map(|v| v.len()).collect();

        #[derive(Clone, PartialEq, Eq, Hash)]
        struct State {
            pos: Vec<u16>,
            /// Operations a thread still makes before its next (a broadcast's further gates).
            pending: Vec<u8>,
            owner: [u8; NOBJ],
            waiting: [u8; NQ],
            released: [u8; NQ],
            flags: u8,
            sem: u8,
            arrived: u8,
            writer: u8,
            readers: [u8; SLOTS],
            writers_waiting: u8,
            once: bool,
        }
        struct Model<'m> {
            ops: &'m [Vec<Op>],
            lens: &'m [usize],
            created_at: &'m [Option<(usize, usize)>],
            barrier_n: u8,
        }
        impl Model<'_> {
            fn enabled(&self, t: usize, st: &State) -> bool {
                let p = st.pos[t] as usize;
                if p >= self.lens[t] {
                    return false;
                }
                if let Some((cr, i)) = self.created_at[t] {
                    if (st.pos[cr] as usize) <= i {
                        return false;
                    }
                } else if t != 0 {
                    return false;
                }
                if st.pending[t] > 0 {
                    return true;
                }
                match self.ops[t][p] {
                    Op::Join(c) => st.pos[c] as usize >= self.lens[c],
                    Op::Lock(o) => st.owner[o] == FREE || st.owner[o] as usize == t,
                    Op::Await(q) => st.released[q] & (1 << t) != 0,
                    _ => true,
                }
            }

            /// Run thread `t`'s operations that are no operation (decisions on what it holds
            /// or has just read). Returns whether the execution ended (a spin-wait's end).
            fn advance(&self, t: usize, st: &mut State) -> bool {
                let me = t as u8;
                loop {
                    let p = st.pos[t] as usize;
                    if p >= self.lens[t] {
                        return false;
                    }
                    let next = match self.ops[t][p] {
                        Op::Jump(x) => x,
                        Op::IfFlag(f, x) => {
                            if st.flags & (1 << f) != 0 {
                                x
                            } else {
                                p + 1
                            }
                        }
                        Op::SemTake(x) => {
                            if st.sem > 0 {
                                st.sem -= 1;
                                x
                            } else {
                                p + 1
                            }
                        }
                        Op::SemAdd => {
                            st.sem = st.sem.saturating_add(1);
                            p + 1
                        }
                        Op::BarArrive(x) => {
                            st.arrived += 1;
                            if st.arrived >= self.barrier_n {
                                st.arrived = 0;
                                p + 1
                            } else {
                                x
                            }
                        }
                        Op::RwTry(write, slot, x) => {
                            let free = st.writer == FREE && (!write || st.readers.iter().all(|&r| r == 0));
                            if free {
                                if write {
                                    st.writer = me;
                                } else {
                                    st.readers[slot] += 1;
                                }
                                x
                            } else {
                                p + 1
                            }
                        }
                        Op::RwRelease(None) => {
                            st.writer = FREE;
                            p + 1
                        }
                        Op::RwRelease(Some((slot, skip))) => {
                            st.readers[slot] = st.readers[slot].saturating_sub(1);
                            if st.readers[slot] == 0 && st.writers_waiting > 0 {
                                p + 1
                            } else {
                                skip
                            }
                        }
                        Op::WriterWaits(w) => {
                            st.writers_waiting = if w { st.writers_waiting + 1 } else { st.writers_waiting.saturating_sub(1) };
                            p + 1
                        }
                        Op::OnceTest(x) => {
                            if st.once {
                                x
                            } else {
                                st.once = true;
                                p + 1
                            }
                        }
                        Op::Wake(q, _) if st.waiting[q] == 0 => p + 1,
                        Op::Discard => return true,
                        _ => return false,
                    };
                    st.pos[t] = next as u16;
                }
            }

            /// The states after thread `t`'s next operation (several for a choice), each with
            /// whether the execution ended there.
            fn step(&self, t: usize, st: &State) -> Vec<(State, bool)> {
                let mut st = st.clone();
                if st.pending[t] > 0 {
                    st.pending[t] -= 1;
                    let end = st.pending[t] == 0 && self.advance(t, &mut st);
                    return vec![(st, end)];
                }
                let bit = 1u8 << t;
                let p = st.pos[t] as usize;
                let mut out = Vec::new();
                match self.ops[t][p] {
                    Op::Lock(o) => st.owner[o] = t as u8,
                    Op::Unlock(o) => st.owner[o] = FREE,
                    Op::Enq(q) => st.waiting[q] |= bit,
                    Op::Await(q) => st.released[q] &= !bit,
                    Op::SetFlag(f) => st.flags |= 1 << f,
                    Op::Wake(q, all) => {
                        let w = st.waiting[q];
                        let k = w.count_ones() as u8;
                        if all {
                            st.released[q] |= w;
                            st.waiting[q] = 0;
                            st.pending[t] = k - 1;
                        } else {
                            for u in 0..8 {
                                if w & (1 << u) != 0 {
                                    let mut s2 = st.clone();
                                    s2.waiting[q] &= !(1 << u);
                                    s2.released[q] |= 1 << u;
                                    s2.pending[t] = u8::from(k > 1);
                                    out.push(s2);
                                }
                            }
                        }
                    }
                    _ => {}
                }
                if out.is_empty() {
                    out.push(st);
                }
                out.into_iter()
                    .map(|mut s| {
                        s.pos[t] += 1;
                        let end = s.pending[t] == 0 && self.advance(t, &mut s);
                        (s, end)
                    })
                    .collect()
            }

            fn paths(&self, st: &State, memo: &mut HashMap<State, u64>, budget: &mut usize) -> u64 {
                if let Some(&c) = memo.get(st) {
                    return c;
                }
                if *budget == 0 {
                    return u64::MAX;
                }
                *budget -= 1;
                let mut total = 0u64;
                let mut any = false;
                for t in 0..self.ops.len() {
                    if !self.enabled(t, st) {
                        continue;
                    }
                    any = true;
                    for (next, end) in self.step(t, st) {
                        total = total.saturating_add(if end { 1 } else { self.paths(&next, memo, budget) });
                    }
                }
                let r = if any { total } else { 1 };
                memo.insert(st.clone(), r);
                r
            }
        }
        // Keep the search small: a program with very long threads is too big anyway.
        let limit = if self.syncs.is_empty() { 60 } else { 200 };
        if lens.iter().sum::<usize>() > limit {
            return u64::MAX;
        }
        let model = Model { ops: &ops, lens: &lens, created_at: &created_at, barrier_n: self.barrier_n as u8 };
        let st = State {
            pos: vec![0; n],
            pending: vec![0; n],
            owner: [FREE; NOBJ],
            waiting: [0; NQ],
            released: [0; NQ],
            flags: 0,
            sem: self.sem_init as u8,
            arrived: 0,
            writer: FREE,
            readers: [0; SLOTS],
            writers_waiting: 0,
            once: false,
        };
        let mut memo: HashMap<State, u64> = HashMap::new();
        let mut budget = 500_000;
        model.paths(&st, &mut memo, &mut budget)
    }

    // ---- features -----------------------------------------------------------------------

    fn features(&self) -> Features {
        let mut f = Features { threads: self.threads.len() - 1, names: BTreeSet::new() };
        let mut add = |s: &'static str| {
            f.names.insert(s);
        };
        fn walk(sts: &[St], add: &mut dyn FnMut(&'static str), depth: usize) {
            for s in sts {
                match s {
                    St::Lock { body, .. } => {
                        add("mutex");
                        if depth > 0 {
                            add("nested-locks");
                        }
                        walk(body, add, depth + 1);
                    }
                    St::TryLock { body, .. } => {
                        add("trylock");
                        walk(body, add, depth + 1);
                    }
                    St::If { body, .. } => {
                        add("branch");
                        walk(body, add, depth);
                    }
                    St::Incr { .. } => add("incr"),
                    St::AssertNe { want, .. } | St::AssertSumNe { want, .. } => {
                        add("asserts");
                        if matches!(want, Want::MayFail) {
                            add("assert-may-fail");
                        }
                    }
                    St::Check { want, .. } => {
                        add("asserts");
                        add("main-check");
                        if matches!(want, Want::MayFail) {
                            add("assert-may-fail");
                        }
                    }
                    St::EndIf { end, .. } => {
                        add("thread-end-if");
                        match end {
                            End::Exit(_) => add("thread-exit"),
                            End::PthreadExit => add("thread-pthread-exit"),
                            _ => {}
                        }
                    }
                    St::Publish => add("heap-publish"),
                    St::Read { loc: Loc::O(_), .. } | St::WriteConst { loc: Loc::O(_), .. } => add("heap-own"),
                    St::CondWait { pred, body, .. } => {
                        add("cond");
                        if !pred {
                            add("cond-no-predicate");
                        }
                        walk(body, add, depth);
                    }
                    St::CondSignal { broadcast, at, body, .. } => {
                        add("cond");
                        if *broadcast {
                            add("cond-broadcast");
                        }
                        match at {
                            SignalAt::After => add("cond-signal-unlocked"),
                            SignalAt::Before => add("cond-signal-early"),
                            SignalAt::Under => {}
                        }
                        walk(body, add, depth);
                    }
                    St::SemInit { v } => {
                        add("sem");
                        add(match v {
                            0 => "sem-init-0",
                            1 => "sem-init-1",
                            _ => "sem-init-2",
                        });
                    }
                    St::SemWait | St::SemPost => add("sem"),
                    St::SemTry { body, .. } => {
                        add("sem");
                        add("sem-trywait");
                        walk(body, add, depth);
                    }
                    St::Once => add("once"),
                    St::BarrierInit { .. } | St::BarrierWait => add("barrier"),
                    St::RwLock { try_, body, .. } => {
                        add("rwlock");
                        if *try_ {
                            add("rwlock-try");
                        }
                        if depth > 0 || body.iter().any(|s| matches!(s, St::Lock { .. })) {
                            add("rwlock-mutex-nested");
                        }
                        walk(body, add, depth);
                    }
                    St::RecLock { unlock, body } => {
                        add("recursive");
                        if !unlock {
                            add("recursive-unbalanced");
                        }
                        walk(body, add, depth);
                    }
                    St::RecTry { body } => {
                        add("recursive");
                        add("recursive-trylock");
                        walk(body, add, depth);
                    }
                    St::SpinWait { f } => {
                        add("spin");
                        if *f == 1 {
                            add("spin-mutual");
                        }
                    }
                    St::SpinSet { .. } => add("spin"),
                    St::AtomStore { .. } | St::AtomLoad { .. } => add("atomics"),
                    St::Cas { exp, des, .. } => {
                        add("atomics");
                        add("atomics-cas");
                        if exp == des {
                            add("atomics-idle");
                        }
                    }
                    St::Rmw { op, v, .. } => {
                        add("atomics");
                        add(if *op == RmwOp::Xchg { "atomics-xchg" } else { "atomics-add" });
                        if *op != RmwOp::Xchg && *v == 0 {
                            add("atomics-idle");
                        }
                    }
                    _ => {}
                }
            }
        }
        for th in &self.threads {
            walk(&th.body, &mut add, 0);
            if th.own {
                add("heap-own");
            }
            match th.heap {
                HeapVia::Arg => add("heap-main-arg"),
                HeapVia::Global => add("heap-main-global"),
                HeapVia::None => {}
            }
            if th.id == 0 {
                add(match th.end {
                    End::Return => "main-return",
                    End::PthreadExit => "main-pthread-exit",
                    _ => "main-exit",
                });
            } else {
                add(match th.end {
                    End::Return => "thread-return",
                    End::PthreadExit => "thread-pthread-exit",
                    End::Exit(_) => "thread-exit",
                    End::UnderscoreExit(_) => "thread-_exit",
                });
                let child = th.creator != 0;
                if child {
                    add("nested-create");
                }
                add(match (self.fate[&th.id], child) {
                    (0, false) => "joined",
                    (1, false) => "detached",
                    (_, false) => "never-joined",
                    (0, true) => "child-joined",
                    (1, true) => "child-detached",
                    (_, true) => "child-never-joined",
                });
            }
        }
        if self.heap_main {
            add("heap-main");
        }
        if let Some((_, want, _)) = self.atexit {
            add("atexit");
            add("asserts");
            if matches!(want, Want::MayFail) {
                add("assert-may-fail");
            }
        }
        // Scenario features that need the whole program.
        let mut all: Vec<&St> = Vec::new();
        fn flatten<'s>(sts: &'s [St], all: &mut Vec<&'s St>) {
            for s in sts {
                all.push(s);
                if let Some(b) = s.body() {
                    flatten(b, all);
                }
            }
        }
        for th in &self.threads {
            flatten(&th.body, &mut all);
        }
        if !self.syncs.is_empty() {
            add("sync");
        }
        if all.iter().filter(|s| matches!(s, St::CondWait { .. })).count() >= 2 {
            add("cond-two-waiters");
        }
        let barrier_waits = all.iter().filter(|s| matches!(s, St::BarrierWait)).count();
        if barrier_waits > 0 && (self.barrier_n as usize) > barrier_waits {
            add("barrier-short");
        }
        if barrier_waits > 0 && (self.barrier_n as usize) < barrier_waits {
            add("barrier-over");
        }
        let sets = |f: usize| all.iter().any(|s| matches!(s, St::SpinSet { f: x } if *x == f));
        if all.iter().any(|s| matches!(s, St::SpinWait { f: 0 })) && !sets(0) {
            add("spin-never-set");
        }
        if all.iter().any(|s| matches!(s, St::If { body, .. } if body.iter().any(|b| matches!(b, St::SpinSet { .. })))) {
            add("spin-conditional");
        }
        if self.syncs.contains(&Sync::Atomics) {
            let main_stores = |plain: bool| self.threads[0].body.iter().take_while(|s| !matches!(s, St::Create { .. })).any(|s| matches!(s, St::AtomStore { plain: p, .. } if *p == plain));
            if main_stores(false) {
                add("atomics-init");
            }
            if main_stores(true) {
                add("atomics-init-plain");
            }
            let word = |s: &St| match s {
                St::AtomStore { w, .. } | St::AtomLoad { w, .. } | St::Cas { w, .. } | St::Rmw { w, .. } => Some(*w),
                _ => None,
            };
            // A word updated but never stored: every update on it finds an unknown value.
            let updated = |w: usize| all.iter().any(|s| matches!(s, St::Cas { w: x, .. } | St::Rmw { w: x, .. } if *x == w));
            let stored = |w: usize| all.iter().any(|s| matches!(s, St::AtomStore { w: x, .. } if *x == w));
            if (0..2).any(|w| updated(w) && !stored(w)) {
                add("atomics-no-store");
            }
            if (0..2).all(|w| all.iter().any(|s| word(s) == Some(w))) {
                add("atomics-two-words");
            }
            // A compare-exchange whose success guards a write and a release.
            let locked = |s: &&St| matches!(s, St::If { v: 1, body, .. } if body.len() == 2 && matches!(body[1], St::AtomStore { .. } | St::Rmw { .. }));
            if all.iter().any(locked) {
                add("atomics-cas-lock");
            }
        }
        f
    }

    // ---- C ------------------------------------------------------------------------------

    fn emit(&self, seed: u64, features: &Features, estimate: u64, scenario: Option<&str>) -> String {
        let mut s = String::new();
        let env = scenario.map(|n| format!("IRS_DIFF_SCENARIO={n} ")).unwrap_or_default();
        let _ = writeln!(s, "// Differential program of seed {seed} (tests/common/program_gen.rs). Reproduce its check with");
        let _ = writeln!(s, "//   {env}IRS_DIFF_FIRST={seed} IRS_DIFF_SEEDS=1 cargo test --release --test differential -- --nocapture");
        let _ = writeln!(s, "// features: {}", features.line());
        let _ = writeln!(s, "// interleavings in the generator's model (an upper bound in practice): {estimate}");
        if features.has("recursive") {
            // PTHREAD_RECURSIVE_MUTEX_INITIALIZER_NP
            s.push_str("#define _GNU_SOURCE\n");
        }
        s.push_str("#include <assert.h>\n#include <pthread.h>\n");
        if features.has("sem") {
            s.push_str("#include <semaphore.h>\n");
        }
        s.push_str("#include <stdlib.h>\n");
        if features.has("thread-_exit") {
            s.push_str("#include <unistd.h>\n");
        }
        s.push('\n');
        s.push_str("int g0, g1, g2;\nint *hp;\nint *pub;\n");
        s.push_str("pthread_mutex_t m0 = PTHREAD_MUTEX_INITIALIZER;\npthread_mutex_t m1 = PTHREAD_MUTEX_INITIALIZER;\n");
        // The objects of the scenarios present.
        const DECLARATIONS: &[(&str, &str)] = &[
            ("recursive", "pthread_mutex_t rm0 = PTHREAD_RECURSIVE_MUTEX_INITIALIZER_NP;\n"),
            ("cond", "pthread_cond_t cv0 = PTHREAD_COND_INITIALIZER;\nint cf0;\n"),
            ("sem", "sem_t s0;\n"),
            ("once", "pthread_once_t once0 = PTHREAD_ONCE_INIT;\n"),
            ("barrier", "pthread_barrier_t b0;\n"),
            ("rwlock", "pthread_rwlock_t rw0 = PTHREAD_RWLOCK_INITIALIZER;\n"),
            ("spin", "volatile int sf0, sf1;\n"),
            ("atomics", "int a0, a1;\n"),
        ];
        for (feature, declaration) in DECLARATIONS {
            if features.has(feature) {
                s.push_str(declaration);
            }
        }
        s.push('\n');
        if let Some((g, _, c)) = self.atexit {
            let _ = writeln!(s, "static void at_exit_check(void) {{\n  int r = g{g};\n  assert(r != {c});\n}}\n");
        }
        if let Some(g) = self.once_g {
            let _ = writeln!(s, "static void init_once0(void) {{\n  g{g} = g{g} + 1;\n}}\n");
        }
        // Children before their creators.
        for th in self.threads.iter().skip(1).rev() {
            self.emit_thread(&mut s, th);
        }
        self.emit_thread(&mut s, &self.threads[0]);
        s
    }

    fn emit_thread(&self, s: &mut String, th: &Thread) {
        let main = th.id == 0;
        if main {
            s.push_str("int main(void) {\n");
        } else {
            let _ = writeln!(s, "void *t{}(void *arg) {{", th.id);
        }
        let children: Vec<usize> = self.threads.iter().filter(|c| c.id != 0 && c.creator == th.id).map(|c| c.id).collect();
        if !children.is_empty() {
            let _ = writeln!(s, "  pthread_t {};", children.iter().map(|c| format!("p{c}")).collect::<Vec<_>>().join(", "));
        }
        if !th.local_src.is_empty() {
            let _ = writeln!(s, "  int {};", (1..=th.local_src.len()).map(|r| format!("r{r} = 0")).collect::<Vec<_>>().join(", "));
        }
        if main {
            if self.atexit.is_some() {
                s.push_str("  atexit(at_exit_check);\n");
            }
            if self.heap_main {
                let _ = writeln!(s, "  int *h = calloc({CELLS}, sizeof(int));");
                if self.threads.iter().any(|c| c.heap == HeapVia::Global) {
                    s.push_str("  hp = h;\n");
                }
            }
        } else {
            match th.heap {
                HeapVia::Arg => s.push_str("  int *h = arg;\n"),
                HeapVia::Global => s.push_str("  int *h = hp;\n"),
                HeapVia::None => {}
            }
            if th.own {
                let _ = writeln!(s, "  int *o = calloc({OWN_CELLS}, sizeof(int));");
            }
        }
        self.emit_body(s, &th.body, 1);
        if th.own && !th.publishes {
            s.push_str("  free(o);\n");
        }
        let _ = writeln!(s, "  {}", th.end.c());
        s.push_str("}\n\n");
    }

    fn emit_body(&self, s: &mut String, body: &[St], depth: usize) {
        let ind = "  ".repeat(depth);
        for st in body {
            match st {
                St::Read { r, loc } => {
                    let _ = writeln!(s, "{ind}r{r} = {};", loc.c());
                }
                St::WriteConst { loc, v } => {
                    let _ = writeln!(s, "{ind}{} = {v};", loc.c());
                }
                St::WriteLocal { loc, r } => {
                    let _ = writeln!(s, "{ind}{} = r{r} + 1;", loc.c());
                }
                St::Incr { loc } => {
                    let _ = writeln!(s, "{ind}{0} = {0} + 1;", loc.c());
                }
                St::AssertNe { r, c, .. } => {
                    let _ = writeln!(s, "{ind}assert(r{r} != {c});");
                }
                St::AssertSumNe { a, b, c, .. } => {
                    let _ = writeln!(s, "{ind}assert(r{a} + r{b} != {c});");
                }
                St::Check { loc, c, .. } => {
                    let _ = writeln!(s, "{ind}assert({} != {c});", loc.c());
                }
                St::Lock { m, body } => {
                    let _ = writeln!(s, "{ind}pthread_mutex_lock(&m{m});");
                    self.emit_body(s, body, depth);
                    let _ = writeln!(s, "{ind}pthread_mutex_unlock(&m{m});");
                }
                St::TryLock { m, body } => {
                    let _ = writeln!(s, "{ind}if (pthread_mutex_trylock(&m{m}) == 0) {{");
                    self.emit_body(s, body, depth + 1);
                    let _ = writeln!(s, "{ind}  pthread_mutex_unlock(&m{m});\n{ind}}}");
                }
                St::If { r, v, body } => {
                    let _ = writeln!(s, "{ind}if (r{r} == {v}) {{");
                    self.emit_body(s, body, depth + 1);
                    let _ = writeln!(s, "{ind}}}");
                }
                St::EndIf { r, v, end } => {
                    let _ = writeln!(s, "{ind}if (r{r} == {v})\n{ind}  {}", end.c());
                }
                St::Publish => {
                    let _ = writeln!(s, "{ind}pub = o;");
                }
                St::ReadPub { r, cell } => {
                    let _ = writeln!(s, "{ind}{{\n{ind}  int *q = pub;\n{ind}  if (q)\n{ind}    r{r} = q[{cell}];\n{ind}}}");
                }
                St::Create { t } => {
                    let arg = if self.threads[*t].heap == HeapVia::Arg { "h" } else { "0" };
                    let _ = writeln!(s, "{ind}pthread_create(&p{t}, 0, t{t}, {arg});");
                }
                St::Join { t } => {
                    let _ = writeln!(s, "{ind}pthread_join(p{t}, 0);");
                }
                St::Detach { t } => {
                    let _ = writeln!(s, "{ind}pthread_detach(p{t});");
                }
                St::CondWait { m, pred, body } => {
                    let _ = writeln!(s, "{ind}pthread_mutex_lock(&m{m});");
                    if *pred {
                        let _ = writeln!(s, "{ind}while (!cf0)\n{ind}  pthread_cond_wait(&cv0, &m{m});");
                    } else {
                        let _ = writeln!(s, "{ind}pthread_cond_wait(&cv0, &m{m});");
                    }
                    self.emit_body(s, body, depth);
                    let _ = writeln!(s, "{ind}pthread_mutex_unlock(&m{m});");
                }
                St::CondSignal { m, broadcast, at, body } => {
                    let signal = format!("{ind}pthread_cond_{}(&cv0);", if *broadcast { "broadcast" } else { "signal" });
                    if *at == SignalAt::Before {
                        let _ = writeln!(s, "{signal}");
                    }
                    let _ = writeln!(s, "{ind}pthread_mutex_lock(&m{m});");
                    self.emit_body(s, body, depth);
                    let _ = writeln!(s, "{ind}cf0 = 1;");
                    if *at == SignalAt::Under {
                        let _ = writeln!(s, "{signal}");
                    }
                    let _ = writeln!(s, "{ind}pthread_mutex_unlock(&m{m});");
                    if *at == SignalAt::After {
                        let _ = writeln!(s, "{signal}");
                    }
                }
                St::SemInit { v } => {
                    let _ = writeln!(s, "{ind}sem_init(&s0, 0, {v});");
                }
                St::SemWait => {
                    let _ = writeln!(s, "{ind}sem_wait(&s0);");
                }
                St::SemPost => {
                    let _ = writeln!(s, "{ind}sem_post(&s0);");
                }
                St::SemTry { post, body } => {
                    let _ = writeln!(s, "{ind}if (sem_trywait(&s0) == 0) {{");
                    self.emit_body(s, body, depth + 1);
                    if *post {
                        let _ = writeln!(s, "{ind}  sem_post(&s0);");
                    }
                    let _ = writeln!(s, "{ind}}}");
                }
                St::Once => {
                    let _ = writeln!(s, "{ind}pthread_once(&once0, init_once0);");
                }
                St::BarrierInit { n } => {
                    let _ = writeln!(s, "{ind}pthread_barrier_init(&b0, 0, {n});");
                }
                St::BarrierWait => {
                    let _ = writeln!(s, "{ind}pthread_barrier_wait(&b0);");
                }
                St::RwLock { write, try_, body } => {
                    let kind = if *write { "wr" } else { "rd" };
                    if *try_ {
                        let _ = writeln!(s, "{ind}if (pthread_rwlock_try{kind}lock(&rw0) == 0) {{");
                        self.emit_body(s, body, depth + 1);
                        let _ = writeln!(s, "{ind}  pthread_rwlock_unlock(&rw0);\n{ind}}}");
                    } else {
                        let _ = writeln!(s, "{ind}pthread_rwlock_{kind}lock(&rw0);");
                        self.emit_body(s, body, depth);
                        let _ = writeln!(s, "{ind}pthread_rwlock_unlock(&rw0);");
                    }
                }
                St::RecLock { unlock, body } => {
                    let _ = writeln!(s, "{ind}pthread_mutex_lock(&rm0);");
                    self.emit_body(s, body, depth + 1);
                    if *unlock {
                        let _ = writeln!(s, "{ind}pthread_mutex_unlock(&rm0);");
                    }
                }
                St::RecTry { body } => {
                    let _ = writeln!(s, "{ind}if (pthread_mutex_trylock(&rm0) == 0) {{");
                    self.emit_body(s, body, depth + 1);
                    let _ = writeln!(s, "{ind}  pthread_mutex_unlock(&rm0);\n{ind}}}");
                }
                St::SpinWait { f } => {
                    let _ = writeln!(s, "{ind}while (!sf{f})\n{ind}  ;");
                }
                St::SpinSet { f } => {
                    let _ = writeln!(s, "{ind}sf{f} = 1;");
                }
                St::AtomStore { w, plain: true, v } => {
                    let _ = writeln!(s, "{ind}a{w} = {v};");
                }
                St::AtomStore { w, plain: false, v } => {
                    let _ = writeln!(s, "{ind}__atomic_store_n(&a{w}, {v}, __ATOMIC_SEQ_CST);");
                }
                St::AtomLoad { r, w } => {
                    let _ = writeln!(s, "{ind}r{r} = __atomic_load_n(&a{w}, __ATOMIC_SEQ_CST);");
                }
                St::Cas { w, e, exp, des, ok } => {
                    let _ = writeln!(s, "{ind}r{e} = {exp};");
                    let to = ok.map(|r| format!("r{r} = ")).unwrap_or_default();
                    let _ = writeln!(s, "{ind}{to}__atomic_compare_exchange_n(&a{w}, &r{e}, {des}, 0, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST);");
                }
                St::Rmw { w, op, v, r } => {
                    let to = r.map(|r| format!("r{r} = ")).unwrap_or_default();
                    let _ = writeln!(s, "{ind}{to}{}(&a{w}, {v}, __ATOMIC_SEQ_CST);", op.builtin());
                }
            }
        }
    }
}
