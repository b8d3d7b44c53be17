//! The program's own order of events, for anchoring published prefixes (DESIGN §8, "Choosing
//! `τ` matters for speed"; docs/src/service.md, "Publishing"): one run with real threads
//! (RECORD), isolated as the explored executions are (the runtime enters the same sandbox
//! before `main`, with only the trace's directory real), whose trace's order of visible events
//! is then followed by a controlled execution as far as it goes (`Policy::Follow`: where the
//! two runs took different paths, an event whose thread cannot go waits while later ones are
//! taken). A prefix of that execution constrains a
//! production run only where the program, left alone, tends to be ordered that way anyway: a
//! pipeline's stages overlap in it, where the default policy's execution (each thread as long as
//! it can) runs them one after the other and makes every production run wait for that.
//!
//! Any complete execution is a valid first execution of the exploration (Alg. 1 of 000 starts
//! from any maximal configuration), so the choice changes how fast production runs, never what
//! is verified.

use crate::executor::{ExecError, Execution, Executor, Options, Policy};
use crate::isolated_run::{self, IsolatedRunError, Scratch};
use shared_proto::{Outcome, ThreadId, Trace};
use std::path::Path;
use std::time::Duration;

/// Why no natural schedule came out of a run.
#[derive(Debug, thiserror::Error)]
pub enum NaturalRunError {
    #[error(transparent)]
    Run(#[from] IsolatedRunError),
    #[error("the run ended without a trace ({0})")]
    NoTrace(String),
    #[error("the run ended in `{0}`")]
    Failed(String),
}

/// Run `program ARGS` once with real threads on the input `options` describes (environment,
/// working directory, standard input), isolated unless `options` says otherwise
/// (`isolated_run`), and return the order of its visible events as a schedule (each event's
/// thread), with how long the run took.
pub fn natural_schedule(program: &Path, args: &[String], options: &Options) -> Result<(Vec<ThreadId>, Duration), NaturalRunError> {
    let scratch = Scratch::new()?;
    let trace_path = scratch.path("natural.trace");
    let ran = isolated_run::run(program, args, options, &scratch, "record", &[("IRS_TRACE", trace_path.as_os_str())])?;
    let took = ran.inside.unwrap_or(ran.wall);
    let trace = Trace::read(&trace_path).map_err(|e| NaturalRunError::NoTrace(format!("{}: {e}", ran.status)))?;
    if !matches!(trace.outcome, Outcome::Exit(_)) {
        return Err(NaturalRunError::Failed(trace.outcome.to_string()));
    }
    Ok((schedule_of(&trace), took))
}

/// The schedule of a recorded trace: each event's thread, once per step. A step is one event,
/// but for a `memcpy` between shared objects: a load and a store of one instruction (two sites
/// in a row with the same source position), one step in EXPLORE, recorded as two events. The
/// store's entry is left out. (Were a pair of another kind taken for one, the controlled
/// execution would not follow the schedule and the caller falls back to its own anchor.)
fn schedule_of(trace: &Trace) -> Vec<ThreadId> {
    use shared_proto::{AccessKind, EventKind, SiteId};
    let sites: std::collections::HashMap<SiteId, &shared_proto::SiteInfo> = trace.sites.iter().map(|(id, info)| (*id, info)).collect();
    let same_instruction = |a: SiteId, b: SiteId| {
        b.0 == a.0.wrapping_add(1)
            && match (sites.get(&a), sites.get(&b)) {
                (Some(x), Some(y)) => (&x.file, x.line, x.column, &x.function) == (&y.file, y.line, y.column, &y.function),
                _ => false,
            }
    };
    let mut last: Vec<Option<&shared_proto::Event>> = vec![None; trace.threads.len()];
    let mut out = Vec::with_capacity(trace.events.len());
    for e in &trace.events {
        let prev = last.get(e.tid.index()).copied().flatten();
        let second_half = e.kind == EventKind::Access(AccessKind::Store)
            && prev.is_some_and(|p| {
                p.k + 1 == e.k && p.kind == EventKind::Access(AccessKind::Load) && matches!((p.site, e.site), (Some(a), Some(b)) if same_instruction(a, b))
            });
        if let Some(slot) = last.get_mut(e.tid.index()) {
            *slot = Some(e);
        }
        if !second_half {
            out.push(e.tid);
        }
    }
    out
}

/// How many natural runs to try (each one's order may or may not be one the controlled
/// execution can follow to a correct end).
const TRIES: usize = 3;

/// A complete execution that follows the program's natural order of events (`natural_schedule`
/// on the executor's program and input) as far as the controlled execution can, run as the
/// exploration runs its first execution. `Ok(Err(why))` when there is none (the runs failed or
/// timed out, or following them does not end correctly): the caller keeps its own anchor.
/// With the execution, how long the natural run it follows took. `reference`: how many events
/// the default schedule's execution has (the caller ran it).
pub fn natural_anchor(ex: &mut Executor, program: &Path, args: &[String], reference: usize) -> Result<Result<(Execution, Duration), String>, ExecError> {
    let mut why = String::new();
    // A natural run that waited by polling (a loop that reads the clock, or sleeps, until
    // something happens) leaves many more events than the default schedule's execution: every
    // production run would then have to poll exactly as often, which real time does not repeat
    // (it leaves the trace). Such a run is no anchor.
    let too_long = |n: usize| n > 2 * reference + 200;
    for _ in 0..TRIES {
        let (schedule, took) = match natural_schedule(program, args, ex.options()) {
            Ok(s) => s,
            // A run that does not end within the time limit will not end sooner next time.
            Err(e @ NaturalRunError::Run(IsolatedRunError::TimedOut(_))) => return Ok(Err(e.to_string())),
            Err(e) => {
                why = e.to_string();
                continue;
            }
        };
        // A run that spun long leaves more steps than a request holds: the rest is the tail's.
        let mut schedule = schedule;
        schedule.truncate(shared_proto::explore_protocol::MAX_SCHEDULE);
        // Followed as far as it goes (`Policy::Follow`), then run again as the exploration will
        // run its first execution: step for step. First with watched loops halting a thread at
        // its first iteration that only read, as the exploration does; then with them
        // iterating and such iterations left out (`Policy::Anchor`'s way), for a natural run
        // that spun.
        for policy in [Policy::Follow, Policy::FollowAnchor] {
            let followed = ex.run_with_policy(&schedule, policy)?;
            let steps = if policy.iterates() { followed.schedule_without_read_only() } else { followed.schedule() };
            let again = ex.run(&steps)?;
            if too_long(again.trace.events.len()) {
                why = format!("it has {} events where the default schedule's execution has {reference}: it polled while it waited", again.trace.events.len());
                break;
            }
            if matches!(again.outcome(), Outcome::Exit(_)) {
                return Ok(Ok((again, took)));
            }
            why = format!("the controlled execution following it ends in `{}`", again.outcome());
        }
    }
    Ok(Err(why))
}


#[cfg(test)]
mod tests {
    use super::*;
    use shared_proto::{AccessKind, Event, EventKind, ObjectRef, ProgramId, SiteId, SiteInfo, SiteKind, ThreadInfo};
    use std::sync::Arc;

    fn site(id: u64, column: u32, kind: AccessKind) -> (SiteId, SiteInfo) {
        let info = SiteInfo { kind: SiteKind::Access(kind), function: "f".into(), file: "p.c".into(), line: 3, column, target: String::new() };
        (SiteId(id), info)
    }

    fn access(t: u32, k: u32, site: u64, kind: AccessKind) -> Event {
        Event { tid: ThreadId(t), k, site: Some(SiteId(site)), kind: EventKind::Access(kind), object: ObjectRef::Memory { addr: 0x1000, size: 0, logical: None }, value: None }
    }

    fn trace(sites: Vec<(SiteId, SiteInfo)>, events: Vec<Event>) -> Trace {
        Trace {
            program_id: ProgramId(1),
            argv: vec![],
            sites: Arc::new(sites),
            globals: Arc::new(vec![]),
            image: Default::default(),
            threads: (0..2).map(|t| ThreadInfo { id: ThreadId(t), parent: None, nth_child: 0 }).collect(),
            events,
            steps: vec![],
            outcome: Outcome::Exit(0),
        }
    }

    #[test]
    fn a_memcpy_is_one_step_even_with_another_thread_between_its_halves() {
        // T0's load (site 5) and store (site 6) are one memcpy: same position, sites in a row.
        let sites = vec![site(5, 7, AccessKind::Load), site(6, 7, AccessKind::Store), site(9, 2, AccessKind::Load)];
        let events = vec![access(0, 0, 5, AccessKind::Load), access(1, 0, 9, AccessKind::Load), access(0, 1, 6, AccessKind::Store)];
        assert_eq!(schedule_of(&trace(sites, events)), vec![ThreadId(0), ThreadId(1)]);
    }

    #[test]
    fn a_load_and_a_store_of_two_instructions_are_two_steps() {
        // `*p = *q`: two instructions, two positions.
        let sites = vec![site(5, 7, AccessKind::Load), site(6, 4, AccessKind::Store)];
        let events = vec![access(0, 0, 5, AccessKind::Load), access(0, 1, 6, AccessKind::Store)];
        assert_eq!(schedule_of(&trace(sites, events)), vec![ThreadId(0), ThreadId(0)]);
    }
}
