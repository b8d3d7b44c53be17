//! `irs verify --publish` (DESIGN §4 and §8 "Publishing", issue 6): the verifier writes the
//! requirement table of its first execution to the program's segment `/dev/shm/irs-<id>`, then
//! appends a smaller cutoff vector each time a node of the leftmost branch of the exploration
//! returns with no bug found, down to the zero vector when the exploration completes safely.
//! Running instrumented programs (ENFORCE) adopt each new cutoff as it appears.

use crate::constrain::{self, ConstrainError, LOG_CAPACITY};
use shared_proto::prefix_segment;
use shared_proto::requirement_table::RequirementTable;
use shared_proto::{Outcome, Trace};
use std::path::PathBuf;
use std::time::Instant;

/// One cutoff written to the segment.
#[derive(Clone, Debug)]
pub struct Published {
    /// Steps of the first execution the prefix keeps.
    pub steps: usize,
    pub cut: Vec<u32>,
    pub constraints: usize,
    /// Since the verification started.
    pub seconds: f64,
    /// Distinct traces explored by then.
    pub traces: u64,
}

pub struct Publisher {
    started: Instant,
    first: Option<(Trace, RequirementTable)>,
    pub segment: Option<PathBuf>,
    pub log: Vec<Published>,
    /// The first thing that went wrong; publishing stops there.
    pub error: Option<String>,
}

impl Publisher {
    pub fn new() -> Publisher {
        Publisher { started: Instant::now(), first: None, segment: None, log: Vec::new(), error: None }
    }

    /// The first execution: install its whole trace as the program's prefix.
    pub fn first(&mut self, trace: &Trace) {
        if !matches!(trace.outcome, Outcome::Exit(_)) {
            self.error = Some(format!("the first execution ended in `{}`: no prefix can be anchored on it", trace.outcome));
            return;
        }
        let table = RequirementTable::from_trace(trace);
        let cut = table.full_cut();
        let installed = prefix_segment::build(&table, trace.program_id, &trace.sites, LOG_CAPACITY, &cut)
            .map_err(ConstrainError::from)
            .and_then(|bytes| constrain::install_bytes(&bytes));
        match installed {
            Ok(path) => {
                self.log.push(Published {
                    steps: trace.steps.len(),
                    constraints: table.constraints_within(&cut),
                    cut,
                    seconds: self.started.elapsed().as_secs_f64(),
                    traces: 0,
                });
                self.segment = Some(path);
                self.first = Some((trace.clone(), table));
            }
            Err(e) => self.error = Some(e.to_string()),
        }
    }

    /// The first `steps` steps of the first execution are safe: publish their cutoff when it
    /// frees at least one constraint (and always the zero vector).
    pub fn safe(&mut self, steps: usize, traces: u64) {
        let (Some((trace, table)), Some(path), None) = (&self.first, &self.segment, &self.error) else { return };
        let events = trace.steps.get(steps).map_or(trace.events.len(), |s| s.first_event as usize);
        let mut cut = vec![0u32; table.threads.len()];
        for e in &trace.events[..events] {
            if let Some(c) = cut.get_mut(e.tid.index()) {
                *c += 1;
            }
        }
        let constraints = table.constraints_within(&cut);
        let last = self.log.last().expect("the first prefix is logged");
        let zero = cut.iter().all(|&c| c == 0);
        if constraints >= last.constraints && !(zero && last.cut.iter().any(|&c| c > 0)) {
            return;
        }
        match constrain::relax(path, &cut) {
            Ok(_) => self.log.push(Published { steps, cut, constraints, seconds: self.started.elapsed().as_secs_f64(), traces }),
            Err(e) => self.error = Some(format!("publishing to {}: {e}", path.display())),
        }
    }
}

impl Default for Publisher {
    fn default() -> Self {
        Publisher::new()
    }
}
