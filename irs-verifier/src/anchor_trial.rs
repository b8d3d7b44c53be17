//! Which of several candidate first executions production runs pay less under (DESIGN §8,
//! "Choosing `τ` matters for speed"; docs/src/service.md, "Publishing"): each candidate's whole
//! trace as a prefix, the program run under it with real threads (ENFORCE), isolated as the
//! explored executions are (`isolated_run`), in rounds in which the candidates alternate, until
//! a time budget is spent; the lower median time from the runtime's start to `exit` wins. Measured, not predicted: neither
//! the number of constraints nor the trace's shape tells a pipeline whose stages a few-preemption
//! execution serialises from threads that alternate often on one lock, where a natural order
//! forces a hand-off at every alternation.

use crate::executor::Options;
use crate::isolated_run::{self, IsolatedRunError, Scratch};
use std::path::Path;
use std::time::{Duration, Instant};

/// Rounds at least and at most (a round runs every candidate once).
const MIN_ROUNDS: usize = 3;
const MAX_ROUNDS: usize = 9;

/// The median time (the runtime's start to `exit`; else the wall time) of `program ARGS` under
/// each prefix (the bytes of a prefix file), each
/// run isolated on the input `options` describes: rounds until `budget` is spent (at least
/// [`MIN_ROUNDS`], at most [`MAX_ROUNDS`]).
pub fn median_times(program: &Path, args: &[String], options: &Options, prefixes: &[Vec<u8>], budget: Duration) -> Result<Vec<Duration>, IsolatedRunError> {
    let scratch = Scratch::new()?;
    let mut paths = Vec::with_capacity(prefixes.len());
    for (i, bytes) in prefixes.iter().enumerate() {
        let path = scratch.path(&format!("prefix-{i}"));
        std::fs::write(&path, bytes).map_err(|e| IsolatedRunError::System(format!("writing a prefix: {e}")))?;
        paths.push(path);
    }
    let started = Instant::now();
    let mut times: Vec<Vec<Duration>> = vec![Vec::new(); prefixes.len()];
    for round in 0..MAX_ROUNDS {
        if round >= MIN_ROUNDS && started.elapsed() >= budget {
            break;
        }
        for (path, t) in paths.iter().zip(times.iter_mut()) {
            // The runtime's own measure (from its start to `exit`) leaves the isolation's set-up
            // out, which on a short program is most of the wall time.
            let ran = isolated_run::run(program, args, options, &scratch, "enforce", &[("IRS_PREFIX", path.as_os_str())])?;
            t.push(ran.inside.unwrap_or(ran.wall));
        }
    }
    Ok(times
        .into_iter()
        .map(|mut t| {
            t.sort_unstable();
            t[t.len() / 2]
        })
        .collect())
}
