//! The independent oracle for `irs verify` (test code only): it enumerates EVERY interleaving
//! of a program by brute force and groups them into traces under both of the verifier's
//! equivalences (`shared_proto::dependence::objects_of` and `shared_proto::equivalence`: two
//! events of different threads are dependent iff they share an object, except two reads of a
//! word under reads-commute, the default).
//!
//! Nothing here uses the verifier: only the executor (`Executor::run`, which follows a schedule
//! and then the default policy) and the trace it returns.
//!
//! * Enumeration: a DFS over schedules. Running a prefix continues with the default policy to the
//!   end; for every step `i` at or after the prefix's length and every thread enabled at step `i`
//!   other than the chosen one, `chosen[..i] + [that thread]` is a new prefix to explore. Every
//!   sequence of scheduling choices is so visited exactly once.
//! * Canonical form of an execution ([`key_under`]): per thread, the sequence of its events (kind,
//!   site, objects); per object, the sequence of `(thread, k)` that touched it, the reads of a
//!   word between two writes as a set under reads-commute; an update that leaves memory as it
//!   found it (a failed compare-exchange) is a read, as `shared_proto::value_model` labels one
//!   interleaving's events in order (the model's only definition). Two executions
//!   are the same trace iff their keys are equal. Runtime thread ids depend on the creation
//!   order, which depends on the schedule when several threads create threads, so every thread
//!   is named by its creation path instead (`main`, `main.0` for main's first child, `main.0.1`
//!   for that thread's second child, ...): in event tids, thread objects, and the thread of heap
//!   and stack logical addresses. Static addresses are named after the program's globals
//!   (`x+4`), so keys do not depend on where the loader put the program either.
//! * Outcomes: a trace's outcome should be the same in all its interleavings, except when
//!   several threads fail (the outcome is the first failure; see `multi_violation`). A failure
//!   (an assertion, `abort`, a crash) halts its own thread only; the others run on to the end
//!   or to the process's end (docs/src/verify.md, "What a run is"), so a failure is an event of its thread
//!   and does not cut the other threads' events short.
//! * Bugs: every failure of every run, the outcome's and those of threads that fail after it
//!   (`Execution::more_bugs`): a failure that always comes second is a bug all the same.
#![allow(dead_code)]

use irs_verifier::executor::{Execution, Executor};
use shared_proto::dependence::{objects_of, ObjectKey};
use shared_proto::equivalence::Equivalence;
use shared_proto::{Outcome, Region, ThreadId, Trace};
use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;
use std::time::Instant;

/// A bug as the oracle and `irs verify` report it: `kind` is `assert`, `abort`, `reach_error`,
/// `crash` or `deadlock`; `message` is the violation's message (empty for deadlocks, whose
/// description names runtime thread ids and addresses, and `signal N` for crashes).
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Bug {
    pub kind: String,
    pub message: String,
}

impl std::fmt::Display for Bug {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.message.is_empty() {
            write!(f, "{}", self.kind)
        } else {
            write!(f, "{}: {}", self.kind, self.message)
        }
    }
}

impl Bug {
    /// Loose comparison with a bug someone else reported: same kind, and the messages equal
    /// after trimming, or one contains the other. Deadlocks compare by kind alone, and so do
    /// violations the oracle saw with an empty message (`abort`, `reach_error`).
    pub fn matches(&self, kind: &str, message: &str) -> bool {
        if self.kind != kind.trim() {
            return false;
        }
        if self.kind == "deadlock" || self.message.is_empty() {
            return true;
        }
        let (a, b) = (self.message.trim(), message.trim());
        if self.kind == "crash" {
            // `signal 11` against `signal 11`, `11`, `SIGSEGV (signal 11)`, ...
            let digits = |s: &str| s.chars().filter(|c| c.is_ascii_digit()).collect::<String>();
            return b.is_empty() || digits(a) == digits(b) || a.contains(b) || b.contains(a);
        }
        !b.is_empty() && (a == b || a.contains(b) || b.contains(a))
    }
}

/// The bug an execution ended in, if any.
pub fn bug_of(outcome: &Outcome) -> Option<Bug> {
    match outcome {
        Outcome::Violation { kind, message } => Some(Bug { kind: kind.name().to_string(), message: message.clone() }),
        Outcome::Signal(s) => Some(Bug { kind: "crash".into(), message: format!("signal {s}") }),
        Outcome::Deadlock { .. } => Some(Bug { kind: "deadlock".into(), message: String::new() }),
        _ => None,
    }
}

/// Whether an execution ran to an end the verifier counts (exit, violation, crash, deadlock, or
/// discarded by a failed assumption).
pub fn is_complete(outcome: &Outcome) -> bool {
    matches!(outcome, Outcome::Exit(_) | Outcome::Violation { .. } | Outcome::Signal(_) | Outcome::Deadlock { .. } | Outcome::Discarded | Outcome::ThreadBound { .. })
}

/// The outcome with its schedule-dependent details removed: deadlock descriptions name runtime
/// thread ids and raw addresses, so every deadlock is `deadlock`.
pub fn outcome_class(outcome: &Outcome) -> String {
    match outcome {
        Outcome::Deadlock { .. } => "deadlock".to_string(),
        o => o.to_string(),
    }
}

/// The stable name of every runtime thread of a trace, indexed by its id: its creation path.
pub fn thread_names(trace: &Trace) -> Vec<String> {
    let mut names: Vec<Option<String>> = vec![None; trace.threads.len()];
    // Parents are created before their children, so ids are in a valid order already; loop
    // until fixed anyway, in case a trace lists them otherwise.
    loop {
        let mut progress = false;
        for t in &trace.threads {
            let i = t.id.index();
            if i >= names.len() || names[i].is_some() {
                continue;
            }
            let name = match t.parent {
                None => Some("main".to_string()),
                Some(p) => names.get(p.index()).cloned().flatten().map(|pn| format!("{pn}.{}", t.nth_child)),
            };
            if name.is_some() {
                names[i] = name;
                progress = true;
            }
        }
        if !progress {
            break;
        }
    }
    names.into_iter().enumerate().map(|(i, n)| n.unwrap_or_else(|| format!("?T{i}"))).collect()
}

struct Namer<'a> {
    names: Vec<String>,
    /// (addr, size, name) of the globals, sorted by address.
    globals: Vec<(u64, u64, &'a str)>,
    /// Where unknown static memory is measured from (the lowest global), so that a relocated
    /// program still gives the same names.
    base: u64,
}

impl<'a> Namer<'a> {
    fn new(trace: &'a Trace) -> Namer<'a> {
        let mut globals: Vec<(u64, u64, &str)> = trace.globals.iter().map(|g| (g.addr, g.size, g.name.as_str())).collect();
        globals.sort();
        let base = globals.first().map(|g| g.0).unwrap_or(0);
        Namer { names: thread_names(trace), globals, base }
    }

    fn thread(&self, t: ThreadId) -> String {
        self.names.get(t.index()).cloned().unwrap_or_else(|| format!("?T{}", t.0))
    }

    fn static_addr(&self, addr: u64) -> String {
        let i = self.globals.partition_point(|g| g.0 <= addr);
        if let Some(&(a, size, name)) = i.checked_sub(1).and_then(|i| self.globals.get(i)) {
            if addr - a < size.max(1) {
                return format!("{name}+{}", addr - a);
            }
        }
        format!("static@{}", addr as i128 - self.base as i128)
    }

    fn region(&self, r: Region, offset: u64) -> String {
        match r {
            Region::Static => self.static_addr(offset),
            Region::Heap { thread, alloc } => format!("heap[{}#{alloc}]+{offset}", self.thread(thread)),
            Region::Stack { thread } => format!("stack[{}]-{offset}", self.thread(thread)),
        }
    }

    fn object(&self, o: &ObjectKey) -> String {
        match *o {
            // A word is named by its first byte (for a stack word: its lowest byte's distance
            // below the stack's top).
            ObjectKey::Word(r, w) => format!("word {}", self.region(r, w * 4)),
            ObjectKey::Mutex(r, off) => format!("mutex {}", self.region(r, off)),
            ObjectKey::Thread(t) => format!("thread {}", self.thread(ThreadId(t))),
            ObjectKey::Process => "the process".to_string(),
            ObjectKey::Atomic => "atomic blocks".to_string(),
            ObjectKey::Sem(r, off) => format!("semaphore {}", self.region(r, off)),
            ObjectKey::Barrier(r, off) => format!("barrier {}", self.region(r, off)),
            ObjectKey::RwLock(r, off) => format!("rwlock {}", self.region(r, off)),
        }
    }
}

/// The canonical key of an execution's trace under the default equivalence (reads commute):
/// see [`key_under`].
pub fn key_of(trace: &Trace) -> String {
    key_under(trace, Equivalence::default(), &BTreeSet::new())
}

/// The barriers (by name) at which more threads arrive in `trace` than their count: their
/// arrivals do not commute (the last of a generation disables the others until the release),
/// as the verifier orders them (`irs-verifier/src/cex/barrier.rs`).
pub fn over_count_barriers(trace: &Trace) -> BTreeSet<String> {
    let namer = Namer::new(trace);
    let mut users: BTreeMap<String, (u32, BTreeSet<u32>)> = BTreeMap::new();
    for e in &trace.events {
        if let (shared_proto::EventKind::BarrierArrive, shared_proto::ObjectRef::Barrier { value, .. }) = (e.kind, e.object) {
            for k in objects_of(e) {
                let u = users.entry(namer.object(&k)).or_default();
                u.0 = value;
                u.1.insert(e.tid.0);
            }
        }
    }
    users.into_iter().filter(|(_, (count, ts))| ts.len() > *count as usize).map(|(b, _)| b).collect()
}

/// The canonical key of an execution's trace under `eq` (see the module's documentation):
/// equal keys iff same events per thread and same order of the dependent events on every
/// object. Readable: one line per thread (`events of main.0: load@SITE[word y+0] ...`), then
/// one per object (`word y+0: main.1#0 main.0#0`, `mutex m+0: ...`, `thread main.0: main#0
/// main.0#3 main#2`). Under reads-commute, the reads of a word between two writes are a set:
/// written sorted, in braces (`word y+0: main#0 {main.0#1 main.1#0} main#2`).
/// The barriers named in `ordered` (see [`over_count_barriers`]) have no commuting operations.
pub fn key_under(trace: &Trace, eq: Equivalence, ordered: &BTreeSet<String>) -> String {
    let namer = Namer::new(trace);
    let mut threads: BTreeMap<String, Vec<String>> = BTreeMap::new();
    // Per object, its events in order, each with whether it commutes with its neighbours
    // that commute.
    let mut objects: BTreeMap<String, Vec<(String, bool)>> = BTreeMap::new();
    // Updates that leave memory as they found it are reads, as the value model labels them.
    let mut events = trace.events.clone();
    shared_proto::value_model::label_trace(&mut events);
    for e in &events {
        let t = namer.thread(e.tid);
        let keys: Vec<ObjectKey> = objects_of(e).collect();
        let objs: Vec<String> = keys.iter().map(|o| namer.object(o)).collect();
        let site = e.site.map(|s| s.to_string()).unwrap_or_else(|| "-".into());
        // A nondet call's value is part of what it is.
        let value = match e.object {
            shared_proto::ObjectRef::Choice { value, .. } => format!("={value}"),
            _ => String::new(),
        };
        threads.entry(t.clone()).or_default().push(format!("{}{value}@{site}[{}]", e.kind.name(), objs.join(",")));
        for (o, key) in objs.into_iter().zip(&keys) {
            let commutes = eq.commuting_read(key, e.kind) && !ordered.contains(&o);
            objects.entry(o).or_default().push((format!("{t}#{}", e.k), commutes));
        }
    }
    let mut key = String::new();
    for (t, evs) in &threads {
        let _ = writeln!(key, "events of {t}: {}", evs.join(" "));
    }
    for (o, evs) in &objects {
        let mut line: Vec<String> = Vec::new();
        let mut reads: Vec<&str> = Vec::new();
        for (ev, commutes) in evs {
            if *commutes {
                reads.push(ev);
                continue;
            }
            if !reads.is_empty() {
                reads.sort_unstable();
                line.push(format!("{{{}}}", reads.join(" ")));
                reads.clear();
            }
            line.push(ev.clone());
        }
        if !reads.is_empty() {
            reads.sort_unstable();
            line.push(format!("{{{}}}", reads.join(" ")));
        }
        let _ = writeln!(key, "{o}: {}", line.join(" "));
    }
    key
}

/// Canonicalise one execution (the verifier's, replayed): see [`key_of`].
pub fn key_of_execution(e: &Execution) -> String {
    key_of(&e.trace)
}

/// A schedule as `irs_verifier::schedule::parse` reads it.
pub fn schedule_string(s: &[ThreadId]) -> String {
    irs_verifier::schedule::format(s).trim_end().to_string()
}

/// One trace the oracle found.
#[derive(Clone, Debug)]
pub struct TraceInfo {
    /// The schedule of the first interleaving of it the oracle ran.
    pub schedule: Vec<ThreadId>,
    /// Its outcome (see [`outcome_class`]), in the first interleaving run.
    pub outcome: String,
    /// Every outcome its interleavings had (one, unless several threads fail in it).
    pub outcomes: BTreeSet<String>,
    pub bug: Option<Bug>,
    /// How many interleavings belong to it.
    pub interleavings: usize,
    /// The fewest preemptions among its interleavings ([`preemptions`]).
    pub min_preemptions: usize,
}

#[derive(Clone, Debug, Default)]
pub struct OracleResult {
    /// Every interleaving (sequence of scheduling choices) run.
    pub interleavings: usize,
    /// The distinct traces under the default equivalence (reads commute), by canonical key.
    pub traces: BTreeMap<String, TraceInfo>,
    /// The distinct traces under Mazurkiewicz (every access to a word dependent), by key.
    pub mazurkiewicz: BTreeMap<String, TraceInfo>,
    /// Every bug, with the schedule of the first interleaving that showed it.
    pub bugs: BTreeMap<Bug, Vec<ThreadId>>,
    /// Every bug, with the fewest preemptions of an interleaving that shows it.
    pub bug_preemptions: BTreeMap<Bug, usize>,
    /// Traces whose interleavings ended differently, where that is not explained by several
    /// threads failing (see `multi_violation`): key, and the two outcomes with their schedules.
    /// An outcome that is not a function of the trace means an event is missing from it (an
    /// uninstrumented access, say): it must be empty for every corpus program.
    pub inconsistent: Vec<String>,
    /// Traces in which several threads fail, so that the outcome (the FIRST failure) depends on
    /// the interleaving, not on the trace: each failure is a bug of the program, and a verifier
    /// that runs one interleaving per trace sees only one of them unless it looks further.
    /// Informational: key, and the outcomes with their schedules.
    pub multi_violation: Vec<String>,
    /// The barriers more threads use than their count in some interleaving: ordered (see
    /// [`over_count_barriers`]).
    pub ordered: BTreeSet<String>,
    /// Some interleaving waited on a program's condition variable (an event on one of its
    /// gates): neither the oracle nor irs explores spurious wake-ups, and irs's verdict names
    /// that as a bound.
    pub cond_waits: bool,
    pub seconds: f64,
}

impl OracleResult {
    /// The distinct traces under `eq`.
    pub fn traces_under(&self, eq: Equivalence) -> &BTreeMap<String, TraceInfo> {
        match eq {
            Equivalence::ReadsCommute => &self.traces,
            Equivalence::Mazurkiewicz => &self.mazurkiewicz,
        }
    }

    pub fn bug_set(&self) -> BTreeSet<Bug> {
        self.bugs.keys().cloned().collect()
    }
}

/// The preemptions of one interleaving, counted at the runtime's steps: a step that runs
/// another thread than the step before while that thread is still enabled (its next operation
/// among the step's enabled ones) preempts it; leaving a thread that is blocked, finished or
/// halted costs nothing (the count of paper 003 §3.1 over visible operations; a
/// `__VERIFIER_nondet_*` value is no switch).
pub fn preemptions(trace: &Trace, schedule: &[ThreadId]) -> usize {
    schedule
        .windows(2)
        .enumerate()
        .filter(|&(i, w)| {
            let (prev, next) = (w[0].thread(), w[1].thread());
            prev != next && trace.steps.get(i + 1).is_some_and(|st| st.enabled.iter().any(|p| p.tid.thread() == prev))
        })
        .count()
}

/// Run every interleaving of the program behind `ex`. Fails (with the schedule) on an execution
/// that does not end properly (timeout, event limit, infeasible), on a run that does not follow
/// its prefix, and beyond `max_interleavings`.
pub fn explore_all(ex: &mut Executor, max_interleavings: usize) -> Result<OracleResult, String> {
    let start = Instant::now();
    let mut r = OracleResult::default();
    let mut stack: Vec<Vec<ThreadId>> = vec![Vec::new()];
    // Every run first: its trace's key depends on the barriers any run orders.
    let mut runs = Vec::new();
    while let Some(prefix) = stack.pop() {
        if r.interleavings >= max_interleavings {
            return Err(format!("more than {max_interleavings} interleavings: the program is too big for the oracle"));
        }
        let e = ex.run(&prefix).map_err(|err| format!("executor failed on schedule [{}]: {err}", schedule_string(&prefix)))?;
        r.interleavings += 1;
        let outcome = e.outcome().clone();
        if !is_complete(&outcome) {
            return Err(format!("schedule [{}] ended in `{outcome}`, not a complete execution", schedule_string(&prefix)));
        }
        let s = e.schedule();
        if s.len() < prefix.len() || s[..prefix.len()] != prefix[..] {
            return Err(format!("the run of prefix [{}] followed [{}] instead", schedule_string(&prefix), schedule_string(&s)));
        }
        for i in (prefix.len()..s.len()).rev() {
            for p in e.trace.steps[i].enabled.iter().rev() {
                // A nondet call: each value of its domain is another interleaving.
                let values = match p.object {
                    shared_proto::ObjectRef::Choice { of, .. } if p.kind == shared_proto::EventKind::Nondet => of.max(1),
                    _ => 1,
                };
                for v in (0..values).rev() {
                    let entry = p.tid.with_choice(v);
                    if entry != s[i] {
                        let mut next = s[..i].to_vec();
                        next.push(entry);
                        stack.push(next);
                    }
                }
            }
        }
        r.ordered.extend(over_count_barriers(&e.trace));
        r.cond_waits |= e.trace.events.iter().any(|ev| matches!(ev.object, shared_proto::ObjectRef::Mutex { addr, .. } if shared_proto::sync_object::is_condition_gate(addr)));
        runs.push((e, s, outcome));
    }
    for (e, s, outcome) in runs {
        let key = key_under(&e.trace, Equivalence::ReadsCommute, &r.ordered);
        let class = outcome_class(&outcome);
        let pre = preemptions(&e.trace, &s);
        let info = || TraceInfo { schedule: s.clone(), outcome: class.clone(), outcomes: BTreeSet::from([class.clone()]), bug: bug_of(&outcome), interleavings: 1, min_preemptions: pre };
        match r.mazurkiewicz.entry(key_under(&e.trace, Equivalence::Mazurkiewicz, &r.ordered)) {
            std::collections::btree_map::Entry::Occupied(mut o) => {
                o.get_mut().interleavings += 1;
                o.get_mut().outcomes.insert(class.clone());
                o.get_mut().min_preemptions = o.get().min_preemptions.min(pre);
            }
            std::collections::btree_map::Entry::Vacant(v) => {
                v.insert(info());
            }
        }
        let bug = bug_of(&outcome);
        // The outcome is the run's first failure; the threads that fail after it (a failing
        // thread halts, the others go on) are bugs of the program as well, which a failure that
        // always comes first would hide (found by the differential campaign, seed 11097).
        for b in bug.iter().cloned().chain(e.more_bugs.iter().filter_map(bug_of)) {
            let least = r.bug_preemptions.entry(b.clone()).or_insert(pre);
            *least = (*least).min(pre);
            r.bugs.entry(b).or_insert_with(|| s.clone());
        }
        match r.traces.get_mut(&key) {
            Some(info) => {
                info.interleavings += 1;
                info.min_preemptions = info.min_preemptions.min(pre);
                if info.outcomes.insert(class.clone()) {
                    let both_violations = matches!(outcome, Outcome::Violation { .. }) && info.outcome.starts_with("violation ");
                    let list = if both_violations { &mut r.multi_violation } else { &mut r.inconsistent };
                    list.push(format!(
                        "one trace, two outcomes: `{}` (schedule {}) and `{class}` (schedule {})\n{key}",
                        info.outcome,
                        schedule_string(&info.schedule),
                        schedule_string(&s)
                    ));
                }
            }
            None => {
                r.traces.insert(key, TraceInfo { schedule: s, outcome: class.clone(), outcomes: BTreeSet::from([class]), bug, interleavings: 1, min_preemptions: pre });
            }
        }
    }
    r.seconds = start.elapsed().as_secs_f64();
    Ok(r)
}
