//! The process's end (DESIGN §3, §7): the thread that calls `exit` (or whose `main` returns)
//! performs the `End` event; after the exit handlers it kills every other thread, one
//! scheduling point each, in an order that is a function of its history; then the execution
//! ends with the end's status.
//!
//! It must never end the process twice: one end per process; a thread that ends it after
//! another waits for good, until that end kills it.

use super::decision::{done, grant};
use super::execution::finish;
use super::with;
use shared_proto::explore_buffer::{ChildOutcome, MAX_THREADS};
use shared_proto::{EventKind, SiteId};
use std::ffi::c_int;

/// The calling thread ends the process (`exit`, `_exit`, `quick_exit`, or `main` returning):
/// its `End` event. If another thread has ended the process already, this one waits for good
/// (until that end kills it): one end per process. Returns once the end is this thread's.
pub fn begin_end(site: Option<SiteId>, code: c_int) {
    if with(|s| s.ending.is_some_and(|(t, _)| t == s.current)) {
        return;
    }
    // An atomic block the thread is in ends with the process.
    with(|s| s.threads[s.current].atomic_depth = 0);
    grant(EventKind::End, site, 0, 0);
    with(|s| s.ending = Some((s.current, code)));
    done();
}

/// The next thread the ender must kill, in a deterministic order that is a function of the
/// ender's history (so that its sequence of kills is, as every thread's actions must be, see
/// DESIGN §8): breadth first over the creation tree from `main`, children in creation order,
/// skipping the ender itself and the threads whose exit it knows of through joins (they are
/// over). A thread's children are read only once it is killed or known over, when they can no
/// longer change; `queue` and `next` keep the walk's place between kills.
fn end_kill_next(queue: &mut KillQueue, next: &mut usize) -> Option<usize> {
    with(|s| {
        let me = s.current;
        if queue.len == 0 {
            queue.push(0);
        }
        while *next < queue.len {
            let v = queue.at[*next] as usize;
            let must_kill = v != me && s.threads[me].known_done & (1 << v) == 0 && !s.threads[v].killed;
            if must_kill {
                return Some(v);
            }
            *next += 1;
            for &k in &s.threads[v].kids {
                queue.push(k);
            }
        }
        None
    })
}

/// The breadth-first walk of [`end_kill_next`], on the stack (every thread once: at most
/// `MAX_THREADS`).
struct KillQueue {
    at: [u8; MAX_THREADS],
    len: usize,
}

impl KillQueue {
    fn push(&mut self, t: usize) {
        if self.len < MAX_THREADS {
            self.at[self.len] = t as u8;
            self.len += 1;
        }
    }
}

/// After the exit handlers: kill every other thread (each kill a scheduling point, so the
/// others may still move first), then end the execution with the status of the end.
pub fn complete_end() -> ! {
    let code = with(|s| s.ending.map_or(0, |(_, c)| c));
    let mut queue = KillQueue { at: [0; MAX_THREADS], len: 0 };
    let mut next = 0;
    while let Some(v) = end_kill_next(&mut queue, &mut next) {
        grant(EventKind::Kill, None, v as u64, 0);
        with(|s| {
            let th = &mut s.threads[v];
            th.finished = true;
            th.killed = true;
            th.pending = None;
            th.nested.clear();
        });
        done();
    }
    match with(|s| s.thread_bound) {
        Some(max) => finish(ChildOutcome::ThreadBound(max)),
        None => finish(ChildOutcome::Exit(code)),
    }
}

/// `main` returned with `code`: as `exit(code)` (the end, the exit handlers, the kills).
pub fn main_returned(code: c_int) -> ! {
    begin_end(None, code);
    if crate::program::exit_handlers::nothing_to_run() {
        complete_end();
    }
    // SAFETY: the C library's exit: it runs the program's exit handlers on this fiber (events
    // like any other) and then the runtime's own hook, which completes the end and never
    // returns into it (the process's end's exit hook).
    unsafe { libc::exit(code) }
}
