//! The scheduling decision (DESIGN §7). At each visible operation the running thread publishes
//! it as its pending operation ([`grant`]) and the next thread is chosen: the requested
//! schedule's ([`SCHEDULE`]), then by the policy (`Default`, `RoundRobin`, `Random`, and the
//! iterating `Anchor` and `AnchorRoundRobin`; under `Follow` and `FollowAnchor` the schedule is
//! an order to follow as far as it goes, [`take_followed`]); switching to it, with its TLS block and errno,
//! grants it its own pending operation, and [`done`] records the operation as an event. With
//! no thread enabled, the decision ends the execution (deadlock, spin verdict, the end).
//!
//! Every choice must be a function of the schedule, the policy's state and the threads'
//! pending operations, nothing else: the same schedule gives the same trace. It must never hold
//! a borrow of the scheduler across a switch.

use super::execution::{finish, PAUSE};
use super::waits::{spin_verdict, SpinEnd};
use super::{monotonic_micros, with};
use crate::explore::fiber::{self, Fiber};
use crate::explore::fiber_tls;
use shared_proto::explore_buffer::{ChildOutcome, OpRecord, BLOCKED_STEP, MAX_THREADS};
use shared_proto::explore_protocol::{Policy, RequestView, MAX_SCHEDULE};
use shared_proto::value_model::Valued;
use shared_proto::{AccessKind, EventKind, LogicalAddr, SiteId, ThreadId};

/// The requested schedule. Static, not on the heap: see [`Continuation`](super::Continuation).
pub(super) static mut SCHEDULE: [u32; MAX_SCHEDULE] = [0; MAX_SCHEDULE];

/// Copy a request's schedule into [`SCHEDULE`] (in a freshly forked child).
pub fn load_schedule(req: &RequestView) {
    // SAFETY: one thread; nothing reads the schedule while it is being replaced.
    let sched = unsafe { &mut *std::ptr::addr_of_mut!(SCHEDULE) };
    for (i, slot) in sched.iter_mut().enumerate().take(req.schedule_len()) {
        *slot = req.schedule_at(i);
    }
}

/// Where [`SCHEDULE`] is, `(start, length)`: rewritten before each execution, so a persistent
/// worker need not restore it.
pub fn schedule_region() -> (usize, usize) {
    (std::ptr::addr_of!(SCHEDULE) as usize, std::mem::size_of::<[u32; MAX_SCHEDULE]>())
}

fn schedule_at(i: usize) -> u32 {
    // SAFETY: one thread; `i` is below the loaded length (checked by the caller).
    unsafe { (*std::ptr::addr_of!(SCHEDULE))[i] }
}

fn splitmix64(state: &mut u64) -> u64 {
    *state = state.wrapping_add(0x9e37_79b9_7f4a_7c15);
    let mut z = *state;
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// How far past the first entry not taken a `Follow` policy looks for one it can take.
const FOLLOW_LOOKAHEAD: usize = 4096;

/// Under a `Follow` policy: the first entry of the schedule not taken yet whose thread can run
/// (`can`), taken (moved before the entries it passed, which stay for later), if there is one
/// within [`FOLLOW_LOOKAHEAD`].
fn take_followed(s: &mut super::Scheduler, can: &[usize]) -> Option<usize> {
    let end = s.schedule_len.min(s.hint + FOLLOW_LOOKAHEAD);
    let j = (s.hint..end).find(|&j| can.contains(&(ThreadId(schedule_at(j)).thread().0 as usize)))?;
    // SAFETY: one thread; the schedule is this execution's copy, below its loaded length.
    let sched = unsafe { &mut *std::ptr::addr_of_mut!(SCHEDULE) };
    sched[s.hint..=j].rotate_right(1);
    let t = ThreadId(sched[s.hint]).thread().0 as usize;
    s.hint += 1;
    Some(t)
}

/// Decide which thread performs the next operation and switch to it. Returns when the calling
/// thread (`me`) has been granted its pending operation; never returns if `me` has finished.
pub(super) fn decide(me: usize) {
    if with(|s| s.snapshot_at == Some(s.step)) {
        with(|s| s.paused_at = monotonic_micros().saturating_sub(s.clock_base));
        // Returns in a continuation, with what it should do from here.
        let c = PAUSE.get().expect("the fork server says where to pause before any execution")();
        with(|s| {
            s.clock_base = monotonic_micros().saturating_sub(s.paused_at);
            s.schedule_len = c.schedule_len;
            s.policy = c.policy;
            s.snapshot_at = c.snapshot_at;
        });
        return decide(me);
    }
    let next = with(|s| {
        // On the stack, not the heap: a decision is made at every visible operation.
        let mut enabled_buf = [0usize; MAX_THREADS];
        let mut n = 0;
        for t in 0..s.threads.len() {
            if s.enabled(t) {
                enabled_buf[n] = t;
                n += 1;
            }
        }
        let enabled = &enabled_buf[..n];
        if let (true, Some((ender, code))) = (enabled.is_empty(), s.ending) {
            if !s.threads[ender].finished {
                // The ender itself waits (an exit handler locks a mutex a blocked thread holds):
                // the process hangs at its end, a deadlock like any other.
                let blocked: Vec<OpRecord> = s.threads.iter().filter(|t| !t.finished).filter_map(|t| t.pending).collect();
                s.buffer.step(BLOCKED_STEP, &blocked, s.elapsed());
                let waits: Vec<String> = (0..s.threads.len()).filter(|&t| !s.threads[t].finished).filter_map(|t| s.describe_wait(t)).collect();
                return Err(waits.join("; "));
            }
            // The ender stopped (a violation in an exit handler) and nothing else can move: the
            // process ends as it would have. What the others wait for is recorded all the same.
            let blocked: Vec<OpRecord> = s.threads.iter().filter(|t| !t.finished).filter_map(|t| t.pending).collect();
            s.buffer.step(BLOCKED_STEP, &blocked, s.elapsed());
            return Ok(Ok(Err(code)));
        }
        if enabled.is_empty() {
            // For the verifier: what the blocked threads wait to do (a pseudo step).
            let blocked: Vec<OpRecord> = s.threads.iter().filter(|t| !t.finished).filter_map(|t| t.pending).collect();
            s.buffer.step(BLOCKED_STEP, &blocked, s.elapsed());
            match spin_verdict(s) {
                Some(SpinEnd::Hangs(waits)) => return Err(waits),
                Some(SpinEnd::Discarded) => {
                    s.discarding = true;
                    return Ok(Ok(Err(0)));
                }
                None => {}
            }
            let waits: Vec<String> =
                (0..s.threads.len()).filter(|&t| !s.threads[t].finished).filter_map(|t| s.describe_wait(t)).collect();
            return Err(waits.join("; "));
        }
        let requested = (!s.policy.follows() && (s.step as usize) < s.schedule_len).then(|| schedule_at(s.step as usize));
        s.choice = 0;
        let chosen = match requested {
            Some(req) => {
                let (tid, choice) = (ThreadId(req).thread().0, ThreadId(req).choice());
                let mask = enabled.iter().fold(0u64, |m, &t| m | 1 << t);
                if !enabled.contains(&(tid as usize)) {
                    return Ok(Err((s.step, req, mask)));
                }
                if choice > 0 {
                    // A value only for a nondet call, and one of its domain.
                    let op = s.threads[tid as usize].pending.expect("enabled threads have one");
                    if op.kind != EventKind::Nondet || choice >= op.size {
                        return Ok(Err((s.step, req, mask)));
                    }
                    s.choice = choice;
                }
                tid as usize
            }
            None => match &mut s.policy {
                Policy::Random(state) => enabled[(splitmix64(state) % enabled.len() as u64) as usize],
                // `Default`: a thread inside a watched loop runs last, and of several the one
                // that has waited longest (`spin_watch`). `RoundRobin`: the next thread by id.
                // Their iterating versions (`Anchor`, `AnchorRoundRobin`): loops iterate (see
                // `loop_head`), and a thread that would only repeat its last iteration with
                // nothing it read written since does not run at all; when none other can, the
                // run would spin for ever.
                policy => {
                    let policy = *policy;
                    let mut buf;
                    let can = if policy.iterates() {
                        buf = [0usize; MAX_THREADS];
                        let mut n = 0;
                        for &t in enabled.iter().filter(|&&t| !s.threads[t].spin.spinning(&s.writes)) {
                            buf[n] = t;
                            n += 1;
                        }
                        &buf[..n]
                    } else {
                        enabled
                    };
                    // A thread that slept comes after every thread that has not (and of those
                    // that slept, after the last runner, in turn, as a serialised run does): the
                    // first execution, on which published prefixes are anchored, then follows
                    // the order the program's sleeps ask for (a pool's jobs start before `main`,
                    // which slept, counts them), so that a production run under a prefix keeps
                    // its timing.
                    let followed = if policy.follows() && !can.is_empty() { take_followed(s, can) } else { None };
                    let waits = |t: usize| s.threads[t].spin.waiting_since();
                    let awake = |t: usize| waits(t).is_none() && !s.threads[t].slept;
                    if can.is_empty() {
                        s.discarding = true;
                        return Ok(Ok(Err(0)));
                    } else if let Some(t) = followed {
                        t
                    } else if matches!(policy, Policy::RoundRobin | Policy::AnchorRoundRobin | Policy::Follow | Policy::FollowAnchor) {
                        can.iter().copied().find(|&t| t > me).unwrap_or(can[0])
                    } else if can.contains(&me) && awake(me) {
                        me
                    } else if let Some(t) = can.iter().copied().find(|&t| awake(t)) {
                        t
                    } else if let Some(t) = can.iter().copied().filter(|&t| waits(t).is_none()).min_by_key(|&t| (t <= me, t)) {
                        t
                    } else {
                        *can.iter().min_by_key(|&&t| (waits(t), t)).expect("not empty")
                    }
                }
            },
        };
        if let (None, Policy::Random(state)) = (requested, &mut s.policy) {
            let op = s.threads[chosen].pending.expect("enabled threads have one");
            if op.kind == EventKind::Nondet && op.size > 1 {
                s.choice = (splitmix64(state) % op.size as u64) as u32;
            }
        }
        s.threads[chosen].slept = false;
        let micros = s.elapsed();
        let threads = &s.threads;
        let ops = enabled.iter().map(|&t| threads[t].pending.as_ref().expect("enabled threads have one"));
        // A kill records what the thread it cuts off was about to do.
        let op = threads[chosen].pending.as_ref().expect("enabled threads have one");
        let cut = (op.kind == EventKind::Kill).then(|| threads.get(op.addr as usize).filter(|v| !v.finished).and_then(|v| v.pending.as_ref())).flatten();
        if !s.buffer.step_with(chosen as u32, ops, micros, cut, s.choice) {
            return Ok(Ok(Ok(None)));
        }
        s.step += 1;
        Ok(Ok(Ok(Some(chosen))))
    });
    match next {
        Err(waits) => finish(ChildOutcome::Deadlock(&waits)),
        Ok(Err((step, requested, enabled_mask))) => finish(ChildOutcome::Infeasible { step, requested, enabled_mask }),
        Ok(Ok(Err(code))) => finish(ChildOutcome::Exit(code)),
        Ok(Ok(Ok(None))) => finish(ChildOutcome::EventLimit),
        Ok(Ok(Ok(Some(chosen)))) if chosen == me => {}
        Ok(Ok(Ok(Some(chosen)))) => switch_to(chosen),
    }
}

/// Suspend the running thread and resume `to` (with its TLS and errno).
pub(super) fn switch_to(to: usize) {
    let (from_fiber, to_fiber) = with(|s| {
        let from = s.current;
        if let Some(tls) = s.tls {
            // SAFETY: the live block is this OS thread's; the buffers have its size.
            unsafe {
                tls.save(&mut s.threads[from].tls);
                tls.restore(&s.threads[to].tls);
            }
        }
        s.threads[from].errno = fiber_tls::errno();
        fiber_tls::set_errno(s.threads[to].errno);
        s.current = to;
        (&mut s.threads[from].fiber as *mut Fiber, &s.threads[to].fiber as *const Fiber)
    });
    // SAFETY: `from` is the running fiber and `to` a suspended one; both live in the scheduler,
    // which never drops or moves a thread's fiber (the vector only grows, and fibers are moved
    // out of it never; growth moves the `Fiber` values, which is why they are re-read below).
    unsafe { fiber::switch(&mut *from_fiber, &*to_fiber) };
}

/// Wait until the calling thread may perform `op`.
pub(super) fn grant(kind: EventKind, site: Option<SiteId>, addr: u64, size: u32) {
    grant_op(kind, site, addr, size, None)
}

pub(super) fn grant_op(kind: EventKind, site: Option<SiteId>, addr: u64, size: u32, logical: Option<LogicalAddr>) {
    grant_valued(kind, site, addr, size, logical, None)
}

/// [`grant_op`] for an access with its operand (`shared_proto::value_model`).
pub(super) fn grant_valued(kind: EventKind, site: Option<SiteId>, addr: u64, size: u32, logical: Option<LogicalAddr>, value: Option<Valued>) {
    /// What the calling thread does next.
    enum Next {
        /// Wait for the operation's turn (and, for a new thread, hand back to its creator).
        Decide(usize, Option<usize>),
        /// Nothing: part of an operation under way, or of an atomic block.
        Go,
        Full,
        Unsupported(EventKind),
    }
    let next = with(|s| {
        let me = s.current;
        let op = OpRecord { tid: me as u32, kind, site, addr, size, logical, value };
        let th = &mut s.threads[me];
        if th.atomic_depth > 0 {
            let EventKind::Access(_) = kind else { return Next::Unsupported(kind) };
            // Part of the atomic block's step: recorded now, no decision.
            let k = th.next_k;
            th.next_k += 1;
            th.atomic_open += 1;
            th.spin.observe(EventKind::Atomic, site.map(|x| x.0), addr, size, &s.writes);
            if let EventKind::Access(k) = kind {
                if k.writes() {
                    s.writes.wrote(addr, size);
                }
            }
            return if s.buffer.event(&op, k) { Next::Go } else { Next::Full };
        }
        if th.pending.is_some() {
            // Opened while its operation is being performed: part of that operation.
            th.nested.push(op);
            return Next::Go;
        }
        th.pending = Some(op);
        Next::Decide(me, s.booting_parent.take())
    });
    match next {
        Next::Go => {}
        Next::Full => finish(ChildOutcome::EventLimit),
        Next::Unsupported(kind) => finish(ChildOutcome::Unsupported(&format!("an operation `{}` inside an atomic block (__VERIFIER_atomic_*)", kind.name()))),
        // A new thread reached its first operation: back to its creator; it runs when chosen.
        Next::Decide(_, Some(parent)) => switch_to(parent),
        Next::Decide(me, None) => decide(me),
    }
}

/// The calling thread performed its granted operation: record it as an event.
pub(super) fn done() -> EventKind {
    let (recorded, kind) = with(|s| {
        let me = s.current;
        let th = &mut s.threads[me];
        if th.pending.is_none() && th.atomic_open > 0 {
            // An access of an atomic block, recorded when it opened.
            th.atomic_open -= 1;
            return (true, EventKind::Access(AccessKind::Load));
        }
        let mut op = th.pending.take().expect("done without grant");
        super::update_check::note_changed(&mut op, th.found);
        if !th.nested.is_empty() {
            th.pending = Some(th.nested.remove(0));
        }
        let k = s.threads[me].next_k;
        s.threads[me].next_k += 1;
        // An update that left memory as it was (a failed compare-exchange, a test-and-set of a
        // set flag) read it: so the spin watch sees it, and it changes nothing a spinning
        // thread reads (`update_check`).
        let watched = if super::update_check::unchanged(&op) { EventKind::Access(AccessKind::AtomicLoad) } else { op.kind };
        match watched {
            EventKind::Access(a) if a.writes() => s.writes.wrote(op.addr, op.size),
            // What a failed trylock read (`spin_watch`: it is a read of the mutex) changes.
            EventKind::Lock | EventKind::TryLock | EventKind::Unlock => s.writes.wrote(op.addr, 1),
            _ => {}
        }
        s.threads[me].spin.observe(watched, op.site.map(|x| x.0), op.addr, op.size, &s.writes);
        (s.buffer.event(&op, k), op.kind)
    });
    if !recorded {
        finish(ChildOutcome::EventLimit);
    }
    kind
}
