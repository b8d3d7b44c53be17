//! `irs explore --random N --seed S`: run N executions with random scheduling and report the
//! distinct outcomes; every violation, crash or deadlock gets a schedule file that `irs replay`
//! reproduces (DESIGN §7). Random runs find bugs; they never prove a program safe.

use crate::replay::{executor, ReplayError};
use irs_verifier::executor::{Options, SnapshotResult};
use irs_verifier::schedule;
use shared_proto::Outcome;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// One distinct outcome and how often it happened.
pub struct OutcomeClass {
    pub outcome: Outcome,
    pub count: u64,
    /// For bugs: the schedule file written for the first execution that ended this way.
    pub schedule_file: Option<PathBuf>,
}

pub struct Report {
    pub executions: u64,
    pub classes: Vec<OutcomeClass>,
    /// Summed over executions, in microseconds: the whole round trip, the execution (fork to
    /// end, or the persistent worker's run with the restore before it) and its set-up (the fork
    /// call in the server, or the restore).
    pub total_micros: u64,
    pub child_micros: u64,
    pub setup_micros: u64,
}

impl Report {
    /// `(set-up, run, transfer)` per execution in microseconds: the fork call or the worker's
    /// restore, the rest of the execution, and everything else (request, response, decoding
    /// the buffer).
    pub fn split(&self) -> (f64, f64, f64) {
        let n = self.executions.max(1) as f64;
        let setup = self.setup_micros as f64 / n;
        let run = (self.child_micros.saturating_sub(self.setup_micros)) as f64 / n;
        let transfer = (self.total_micros.saturating_sub(self.child_micros)) as f64 / n;
        (setup, run, transfer)
    }
}

impl Report {
    pub fn found_bug(&self) -> bool {
        self.classes.iter().any(|c| c.outcome.is_bug())
    }
}

/// The key outcomes are grouped by: a message with addresses in it still names one bug.
fn class_key(o: &Outcome) -> String {
    match o {
        Outcome::Timeout { .. } => "timeout".into(),
        other => other.to_string(),
    }
}

#[allow(clippy::too_many_arguments)]
pub fn explore_random(
    program: &str,
    args: &[String],
    executions: u64,
    seed: u64,
    snapshot_at: Option<usize>,
    options: Options,
    out_dir: &Path,
    mut progress: impl FnMut(u64),
) -> Result<Report, ReplayError> {
    let mut ex = executor(program, args, options)?;
    // Pause the default execution after `snapshot_at` steps and start every execution there.
    let snapshot = match snapshot_at {
        None => None,
        Some(k) => {
            let default = ex.run(&[])?;
            let steps = default.schedule();
            if k > steps.len() {
                return Err(ReplayError::Snapshot(format!("the default execution has only {} steps", steps.len())));
            }
            match ex.snapshot(None, &steps[..k])? {
                SnapshotResult::Ready(s) => Some(s),
                SnapshotResult::Ended(_) => return Err(ReplayError::Snapshot(format!("the execution ended before step {k}"))),
                SnapshotResult::Declined => return Err(ReplayError::Snapshot(format!("the execution has changed its view of the file system by step {k}, which runs from a snapshot cannot share"))),
            }
        }
    };
    let mut classes: BTreeMap<String, OutcomeClass> = BTreeMap::new();
    let (mut total_micros, mut child_micros, mut setup_micros) = (0, 0, 0);
    let stem = Path::new(program).file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_else(|| "prog".into());
    for i in 0..executions {
        let run = match &snapshot {
            Some(snap) => ex.run_random_from(snap, &[], seed.wrapping_add(i))?,
            None => ex.run_random(&[], seed.wrapping_add(i))?,
        };
        total_micros += run.total_micros;
        child_micros += run.micros;
        setup_micros += run.setup_micros;
        let key = class_key(run.outcome());
        let n = classes.len();
        let class = classes.entry(key).or_insert_with(|| OutcomeClass { outcome: run.outcome().clone(), count: 0, schedule_file: None });
        class.count += 1;
        if class.count == 1 && class.outcome.is_bug() {
            let path = out_dir.join(format!("{stem}.bug{n}.schedule"));
            std::fs::write(&path, schedule::format(&run.schedule())).map_err(|e| ReplayError::ScheduleFile {
                path: path.display().to_string(),
                reason: e.to_string(),
            })?;
            class.schedule_file = Some(path);
        }
        progress(i + 1);
    }
    if let Some(snap) = snapshot {
        ex.release(snap)?;
    }
    Ok(Report { executions, classes: classes.into_values().collect(), total_micros, child_micros, setup_micros })
}
