//! `irs verify --publish` (DESIGN §4 and §8 "Publishing"): the verifier writes the requirement
//! table of its first execution to the segment of the input it verifies (`/dev/shm/irs-<id>-<key>-<tag>`;
//! the program's `/dev/shm/irs-<id>` when run by hand), then appends a smaller cutoff vector each
//! time a node of the leftmost branch of the exploration returns with no bug found, down to the
//! zero vector when the exploration completes safely. Running instrumented programs (ENFORCE) adopt
//! each new cutoff as it appears.

use crate::constrain::{self, LOG_CAPACITY};
use shared_proto::equivalence::Equivalence;
use shared_proto::prefix_segment::{self, PrefixView};
use shared_proto::ThreadId;
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
    /// The segment of an earlier verifier of the same program was taken over.
    pub reused: bool,
    /// The first thing that went wrong; publishing stops there.
    pub error: Option<String>,
    /// Where to publish: an input's segment; `None`: the program's, `/dev/shm/irs-<id>`.
    target: Option<PathBuf>,
    /// The equivalence the verification explores in: the table's constraints are its
    /// happens-before (DESIGN §4).
    pub equivalence: Equivalence,
    /// What to anchor the table on (`crate::service::anchor`).
    pub anchor: crate::service::anchor::Anchor,
}

impl Publisher {
    pub fn new() -> Publisher {
        Publisher { started: Instant::now(), first: None, segment: None, log: Vec::new(), reused: false, error: None, target: None, equivalence: Equivalence::default(), anchor: Default::default() }
    }

    /// The segment this publisher writes for program `id`.
    pub fn segment_path(&self, id: shared_proto::ProgramId) -> PathBuf {
        self.target.clone().unwrap_or_else(|| prefix_segment::segment_path(id))
    }

    /// Publish to `segment` (an input's) instead of the program's segment.
    pub fn to(segment: PathBuf) -> Publisher {
        Publisher { target: Some(segment), ..Publisher::new() }
    }

    /// The first execution: install its whole trace as the program's prefix.
    pub fn first(&mut self, trace: &Trace) {
        if !matches!(trace.outcome, Outcome::Exit(_)) {
            self.error = Some(format!("the first execution ended in `{}`: no prefix can be anchored on it", trace.outcome));
            return;
        }
        let table = RequirementTable::from_trace(trace, self.equivalence);
        let cut = table.full_cut();
        let bytes = match prefix_segment::build(&table, trace.program_id, &trace.sites, LOG_CAPACITY, &cut) {
            Ok(b) => b,
            Err(e) => {
                self.error = Some(e.to_string());
                return;
            }
        };
        // A verifier restarted after a crash finds its predecessor's segment: the same first
        // execution gives the same table, and the prefix in force stays (it only shrinks).
        let path = self.segment_path(trace.program_id);
        if let Ok(old) = std::fs::read(&path) {
            if let (Ok(old_view), Ok(new_view)) = (PrefixView::parse(&old, Some(trace.program_id)), PrefixView::parse(&bytes, None)) {
                if same_table(&old_view, &new_view) {
                    let latest = old_view.cutoff(old_view.published() - 1);
                    self.log.push(Published {
                        steps: trace.steps.len(),
                        constraints: table.constraints_within(&latest),
                        cut: latest,
                        seconds: self.started.elapsed().as_secs_f64(),
                        traces: 0,
                    });
                    self.reused = true;
                    self.segment = Some(path);
                    self.first = Some((trace.clone(), table));
                    return;
                }
                self.error = Some(format!(
                    "{} holds a prefix of another first execution; remove it to publish a new one",
                    path.display()
                ));
                return;
            }
        }
        let installed = constrain::install_bytes_at(&bytes, &path).map(|_| path.clone());
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
    /// frees at least one constraint, and always the zero vector. A smaller cutoff that frees no
    /// constraint still lets threads past the barrier (rule 2) sooner: it is published too, as
    /// long as the log keeps room for every constraint-freeing cutoff that may follow.
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
        if cut.iter().zip(&last.cut).any(|(a, b)| a > b) {
            // Only ever smaller: a restarted verifier waits until it is below what is in force.
            return;
        }
        let zero = cut.iter().all(|&c| c == 0);
        let frees = constraints < last.constraints || (zero && last.cut.iter().any(|&c| c > 0));
        // Room kept: one entry per constraint that may still be freed, and the zero vector.
        let room = self.log.len() + constraints + 2 < LOG_CAPACITY;
        if !frees && (cut == last.cut || !room) {
            return;
        }
        match constrain::relax(path, &cut) {
            Ok(_) => self.log.push(Published { steps, cut, constraints, seconds: self.started.elapsed().as_secs_f64(), traces }),
            Err(e) => self.error = Some(format!("publishing to {}: {e}", path.display())),
        }
    }
}

/// Two prefixes with the same requirement table (their cutoff logs aside).
fn same_table(a: &PrefixView, b: &PrefixView) -> bool {
    a.program_id() == b.program_id()
        && a.threads() == b.threads()
        && (0..a.threads()).all(|t| {
            let t = ThreadId(t as u32);
            a.thread_info(t) == b.thread_info(t)
                && a.thread_rows(t) == b.thread_rows(t)
                && (0..a.thread_rows(t)).all(|k| {
                    let (sa, ra) = a.row(t, k);
                    let (sb, rb) = b.row(t, k);
                    sa == sb && ra.eq(rb)
                })
        })
}

impl Default for Publisher {
    fn default() -> Self {
        Publisher::new()
    }
}

