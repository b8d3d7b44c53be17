//! The life of a logical thread (DESIGN §7): `pthread_create` (the child runs at once up to its
//! first visible operation), `pthread_join`, the thread's exit, and halting for good at a
//! violation or a crash (DESIGN §8: one thread's failure does not hide another's). When the
//! last thread has finished, the execution ends.
//!
//! It must never drop or move a thread's fiber or stack while the execution runs: a finished
//! thread stays in the scheduler's table (its return value, name and clock are read after).

use super::decision::{decide, done, grant, switch_to};
use super::execution::finish;
use super::thread_data::{handle_of, run_key_destructors, tid_of};
use super::waits::{spin_verdict, SpinEnd};
use super::{current, with, LogicalThread, StartRoutine};
use crate::explore::fiber::Fiber;
use crate::explore::stack_pool;
use crate::thread::thread_flag;
use shared_proto::explore_buffer::{ChildOutcome, MAX_THREADS};
use shared_proto::{EventKind, SiteId, ViolationKind};
use std::ffi::{c_int, c_void};

extern "C" fn thread_main(arg: *mut c_void) {
    let tid = arg as usize;
    thread_flag::set_active(true);
    let (routine, start_arg) = with(|s| s.threads[tid].start.take().expect("a new thread has a start routine"));
    let ret = routine(start_arg);
    exit_thread(ret);
}

/// `pthread_create`: a create event, then the child runs to its first operation.
pub fn create(out: *mut u64, routine: StartRoutine, arg: *mut c_void, site: u64) -> c_int {
    super::thread_bound::cut_if_over(site);
    // Announced with the id the child would get now; other threads may create threads before
    // this create is granted, so the id is fixed only when it is performed.
    grant(EventKind::Create, Some(SiteId(site)), with(|s| s.threads.len()) as u64, 0);
    let child = with(|s| {
        let child = s.threads.len();
        let cur = s.current;
        if let Some(op) = s.threads[cur].pending.as_mut() {
            op.addr = child as u64;
        }
        child
    });
    if child >= MAX_THREADS {
        finish(ChildOutcome::Unsupported(&format!(
            "the program creates more than {MAX_THREADS} {}; `--max-threads N` bounds how many threads each thread creates)",
            shared_proto::explore_protocol::THREAD_CAPACITY
        )));
    }
    let made = with(|s| {
        let stack = stack_pool::stack(child)?;
        let parent = s.current;
        let nth = s.threads[parent].children;
        s.threads[parent].children += 1;
        s.buffer.thread(child as u32, Some(parent as u32), nth);
        let tls = s.tls.map(|t| t.fresh()).unwrap_or_default();
        let range = (stack.bottom() as u64, stack.top() as u64);
        let fiber = Fiber::new(stack, thread_main, child as *mut c_void);
        let mut th = LogicalThread::new(fiber, range, tls, Some((routine, arg)));
        th.known_done = s.threads[parent].known_done;
        th.clock_ns = s.threads[parent].clock_ns;
        s.threads.push(th);
        s.threads[parent].kids.push(child);
        Some(parent)
    });
    let Some(parent) = made else {
        finish(ChildOutcome::Unsupported("no stack for a new thread"));
    };
    done();
    if !out.is_null() {
        // SAFETY: `out` is the caller's pthread_t slot (pthread_create's contract).
        unsafe { *out = handle_of(child as u32) };
    }
    with(|s| s.booting_parent = Some(parent));
    switch_to(child);
    0
}

/// `pthread_join`.
pub fn join(handle: u64, retval: *mut *mut c_void, site: u64) -> c_int {
    let Some(target) = tid_of(handle).filter(|&t| with(|s| (t as usize) < s.threads.len())) else {
        return libc::ESRCH;
    };
    grant(EventKind::Join, Some(SiteId(site)), target as u64, 0);
    let ret = with(|s| {
        let t = target as usize;
        let known = s.threads[t].known_done | 1 << t;
        let me = s.current;
        s.threads[me].known_done |= known;
        s.threads[me].clock_ns = s.threads[me].clock_ns.max(s.threads[t].clock_ns);
        s.threads[t].retval
    });
    done();
    if !retval.is_null() {
        // SAFETY: the caller's out-parameter (pthread_join's contract).
        unsafe { *retval = ret };
    }
    0
}

/// The calling thread ends (its start routine returned or it called `pthread_exit`).
pub fn exit_thread(ret: *mut c_void) -> ! {
    // An atomic block the thread is in ends with it.
    with(|s| s.threads[s.current].atomic_depth = 0);
    run_key_destructors();
    let me = current();
    grant(EventKind::Exit, None, me as u64, 0);
    done();
    if me == 0 {
        // `main` called pthread_exit: the process lives on until the other threads end.
        with(|s| s.threads[0].finished = true);
    } else {
        with(|s| {
            s.threads[me as usize].finished = true;
            s.threads[me as usize].retval = ret;
        });
    }
    leave(me as usize)
}

/// A violation (failed assert, abort, reach_error) in the running thread. The first one is the
/// execution's outcome (later ones are kept as further bugs); the thread halts for good and the
/// others go on to the end. A halted thread does nothing more, so it is independent of
/// everything after: the executions the verifier sees stay those of the program's unfolding,
/// and one thread's failure does not hide another's (DESIGN §8). `irs replay` of the schedule
/// still ends in it.
pub fn violation(kind: ViolationKind, message: &str) -> ! {
    halt(ChildOutcome::Violation(kind, message))
}

/// The running thread crashed (a signal handler calls this): it halts like a violation.
/// Nothing in the scheduler is borrowed while user code runs, so this is safe to call from the
/// handler unless the crash was inside the runtime or the allocator itself.
pub fn crashed(sig: c_int) -> ! {
    halt(ChildOutcome::Signal(sig))
}

fn halt(outcome: ChildOutcome) -> ! {
    with(|s| s.buffer.outcome(outcome));
    stop_thread(current() as usize)
}

/// The thread `me` (the running one) does nothing more: finished, never joinable.
pub(super) fn stop_thread(me: usize) -> ! {
    let booting = with(|s| {
        let th = &mut s.threads[me];
        th.finished = true;
        th.halted = true;
        th.pending = None;
        th.nested.clear();
        s.booting_parent.take()
    });
    if let Some(parent) = booting {
        // It failed before its first operation: its creator goes on from the create.
        switch_to(parent);
        unreachable!("a halted thread is never resumed");
    }
    leave(me)
}

/// A finished thread hands over for good; when no thread is left the process exits (status 0,
/// as when the last thread of a program whose `main` called `pthread_exit` ends).
fn leave(me: usize) -> ! {
    let all_done = with(|s| s.threads.iter().all(|t| t.finished));
    if all_done {
        match with(|s| spin_verdict(s)) {
            Some(SpinEnd::Hangs(waits)) => finish(ChildOutcome::Deadlock(&waits)),
            Some(SpinEnd::Discarded) => {
                with(|s| s.discarding = true);
                finish(ChildOutcome::Exit(0))
            }
            None => {}
        }
        // After `main` called `pthread_exit`, the last thread's end ends the process as `exit(0)`
        // would: its exit handlers would run on whichever thread ends last, which is not a
        // function of that thread's history. Without handlers there is nothing to run.
        if crate::program::exit_handlers::atexit_handlers() > 0 && with(|s| s.ending.is_none() && !s.threads[0].halted) {
            finish(ChildOutcome::Unsupported("exit handlers (atexit) that run after the last thread ends, `main` having called pthread_exit"));
        }
        finish(ChildOutcome::Exit(0));
    }
    decide(me);
    unreachable!("a finished thread is never resumed")
}
