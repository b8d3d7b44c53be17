//! Random small concurrent C programs for the differential campaign (tests/differential.rs,
//! benchmarks/differential/run.py): each one is a deterministic function of a `u64` seed.
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
//! Every program terminates under every schedule: there are no loops, every mutex is released on
//! every path (except by a thread that fails an assertion while holding it, or that the process's
//! end cuts off), and nobody waits for anyone except by join (of its own children, with no lock
//! held) and by locks (deadlocks, which are bugs the oracle sees too, are possible).
//!
//! Size: threads get fewer statements the more threads there are, and the generator counts the
//! program's interleavings in a model of its visible operations (`Gen::estimate`: locks block,
//! but values, failures, failed trylocks and early ends are ignored; an upper bound on the
//! oracle's count in practice, never exceeded in 3,000 programs) and draws again (from the same
//! random stream) until that is at most `MAX_ESTIMATE`. The oracle needs about 1/20,000 s per
//! interleaving here; the campaign's programs have at most about 29,000.
#![allow(dead_code)]

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::fmt::Write as _;

/// Programs whose model has more interleavings than this are drawn again.
pub const MAX_ESTIMATE: u64 = 30_000;

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
}

impl Loc {
    fn c(self) -> String {
        match self {
            Loc::G(i) => format!("g{i}"),
            Loc::H(i) => format!("h[{i}]"),
            Loc::O(i) => format!("o[{i}]"),
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

/// The program of `seed`.
pub fn generate(seed: u64) -> Generated {
    let mut rng = Rng::new(seed);
    let mut redraws = 0;
    loop {
        let mut g = Gen::new(&mut rng);
        g.build();
        let estimate = g.estimate();
        if estimate <= MAX_ESTIMATE {
            let features = g.features();
            let source = g.emit(seed, &features, estimate);
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
        Gen { rng, threads: Vec::new(), nglobals, nmutexes, heap_main, atexit: None, fail_percent, fate: BTreeMap::new(), inversion: Vec::new() }
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
                    St::Lock { body, .. } | St::TryLock { body, .. } | St::If { body, .. } => walk(body, t, vals, own_by),
                    _ => {}
                }
            }
        }
        for th in &self.threads {
            walk(&th.body, th.id, &mut vals, &mut own_by);
        }
        for v in vals.values_mut() {
            v.insert(0);
        }
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
                    St::Lock { body, .. } | St::TryLock { body, .. } | St::If { body, .. } => fix(body, t, src, possible, choose),
                    _ => {}
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
    /// no other thread holds the mutex. Counted by memoised search over the vector of positions.
    /// The real count (the oracle's) is smaller in practice, since failures, failed trylocks and
    /// the process's end only remove interleavings, but for the kills an end adds (counted here as
    /// operations of the ender, one per other thread, even joined ones); the campaign reports any
    /// program whose count exceeds its model's.
    fn estimate(&self) -> u64 {
        #[derive(Clone, Copy)]
        enum Op {
            Plain,
            Create(usize),
            Join(usize),
            Lock(usize),
            Unlock(usize),
        }
        let n = self.threads.len();
        let handler_ops = usize::from(self.atexit.is_some());
        let mut ops: Vec<Vec<Op>> = vec![Vec::new(); n];
        fn count(sts: &[St], v: &mut Vec<Op>, end_ops: usize, handler_ops: usize) {
            for s in sts {
                match s {
                    St::Read { .. } | St::WriteConst { .. } | St::WriteLocal { .. } | St::Check { .. } | St::Publish => v.push(Op::Plain),
                    St::Incr { .. } => v.extend([Op::Plain, Op::Plain]),
                    St::ReadPub { .. } => v.extend([Op::Plain, Op::Plain]),
                    St::AssertNe { .. } | St::AssertSumNe { .. } | St::Detach { .. } => {}
                    St::Lock { m, body } => {
                        v.push(Op::Lock(*m));
                        count(body, v, end_ops, handler_ops);
                        v.push(Op::Unlock(*m));
                    }
                    // A trylock never blocks; taken as always succeeding, but holding nothing
                    // (so that others' locks are never blocked by it: more interleavings).
                    St::TryLock { body, .. } => {
                        v.push(Op::Plain);
                        count(body, v, end_ops, handler_ops);
                        v.push(Op::Plain);
                    }
                    St::If { body, .. } => count(body, v, end_ops, handler_ops),
                    St::EndIf { end, .. } => {
                        v.push(Op::Plain);
                        if end.ends_process(false) {
                            v.extend(std::iter::repeat_n(Op::Plain, end_ops + handler_ops));
                        }
                    }
                    St::Create { t } => v.push(Op::Create(*t)),
                    St::Join { t } => v.push(Op::Join(*t)),
                }
            }
        }
        for th in &self.threads {
            let v = &mut ops[th.id];
            if th.heap == HeapVia::Global {
                v.push(Op::Plain); // h = hp
            }
            if th.id == 0 && self.heap_main && self.threads.iter().any(|c| c.heap == HeapVia::Global) {
                v.push(Op::Plain); // hp = h
            }
            count(&th.body, v, n - 1, handler_ops);
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
        // held[t][p]: the mutexes (bits) thread t holds after its first p operations.
        let held: Vec<Vec<u8>> = ops
            .iter()
            .map(|v| {
                let mut h = vec![0u8];
                for op in v {
                    let last = *h.last().unwrap();
                    h.push(match op {
                        Op::Lock(m) => last | (1 << m),
                        Op::Unlock(m) => last & !(1 << m),
                        _ => last,
                    });
                }
                h
            })
            .collect();
        let mut memo: HashMap<Vec<u8>, u64> = HashMap::new();
        #[allow(clippy::too_many_arguments)]
        fn paths(pos: &mut Vec<u8>, ops: &[Vec<Op>], lens: &[usize], held: &[Vec<u8>], created_at: &[Option<(usize, usize)>], memo: &mut HashMap<Vec<u8>, u64>) -> u64 {
            if let Some(&c) = memo.get(pos) {
                return c;
            }
            let mut total = 0u64;
            let mut any = false;
            for t in 0..ops.len() {
                let p = pos[t] as usize;
                if p >= lens[t] {
                    continue;
                }
                if let Some((cr, i)) = created_at[t] {
                    if (pos[cr] as usize) <= i {
                        continue;
                    }
                } else if t != 0 {
                    continue;
                }
                if let Op::Join(c) = ops[t][p] {
                    if (pos[c] as usize) < lens[c] {
                        continue;
                    }
                }
                if let Op::Lock(m) = ops[t][p] {
                    if (0..ops.len()).any(|u| u != t && held[u][pos[u] as usize] & (1 << m) != 0) {
                        continue;
                    }
                }
                any = true;
                pos[t] += 1;
                total = total.saturating_add(paths(pos, ops, lens, held, created_at, memo));
                pos[t] -= 1;
            }
            let r = if any { total } else { 1 };
            memo.insert(pos.clone(), r);
            r
        }
        // Keep the search small: a program with very long threads is too big anyway.
        if lens.iter().sum::<usize>() > 60 {
            return u64::MAX;
        }
        let mut pos = vec![0u8; n];
        paths(&mut pos, &ops, &lens, &held, &created_at, &mut memo)
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
        f
    }

    // ---- C ------------------------------------------------------------------------------

    fn emit(&self, seed: u64, features: &Features, estimate: u64) -> String {
        let mut s = String::new();
        let _ = writeln!(s, "// Differential program of seed {seed} (tests/common/program_gen.rs). Reproduce its check with");
        let _ = writeln!(s, "//   IRS_DIFF_FIRST={seed} IRS_DIFF_SEEDS=1 cargo test --release --test differential -- --nocapture");
        let _ = writeln!(s, "// features: {}", features.line());
        let _ = writeln!(s, "// interleavings in the generator's model (an upper bound in practice): {estimate}");
        s.push_str("#include <assert.h>\n#include <pthread.h>\n#include <stdlib.h>\n");
        if features.has("thread-_exit") {
            s.push_str("#include <unistd.h>\n");
        }
        s.push('\n');
        s.push_str("int g0, g1, g2;\nint *hp;\nint *pub;\n");
        s.push_str("pthread_mutex_t m0 = PTHREAD_MUTEX_INITIALIZER;\npthread_mutex_t m1 = PTHREAD_MUTEX_INITIALIZER;\n\n");
        if let Some((g, _, c)) = self.atexit {
            let _ = writeln!(s, "static void at_exit_check(void) {{\n  int r = g{g};\n  assert(r != {c});\n}}\n");
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
            }
        }
    }
}
