//! The IRS service (DESIGN §1, §4 "Inputs" and §8 "Publishing"): what keeps a program running under
//! verified prefixes while its verification goes on in the background.
//!
//! - [`input`]: what a verification covers (arguments, environment, working directory, standard
//!   input, files) and its key;
//! - [`files`]: which input a run is on, given the files its verification read as they are now;
//! - [`store`]: where each input's verification lives (input, state, log, bugs, segment);
//! - [`state`]: what a background verifier says about itself (running, finished, stale);
//! - [`queue`] and [`worker`]: inputs waiting for verification, verified one after another by
//!   one background worker per program;
//! - [`mapped`]: a prefix segment read in place;
//! - [`publish`]: how `irs verify --publish` writes ever smaller prefixes to a segment;
//! - [`session`]: `irs run`: find the verification of the run's input, or queue it and wait, or
//!   react (serialise, stop, run free);
//! - [`in_place`]: a single verified run that replaces `irs run` (`exec`) instead of being
//!   waited for.

pub mod anchor;
pub mod files;
pub mod in_place;
pub mod input;
pub mod mapped;
pub mod publish;
pub mod queue;
pub mod session;
pub mod state;
pub mod status_report;
pub mod store;
pub mod worker;

use crate::replay::{executor, ReplayError};
use irs_verifier::executor::Options as ExecOptions;
use shared_proto::prefix_segment::PrefixView;
use shared_proto::ProgramId;
use store::{InputStore, ProgramStore};

pub use in_place::InPlace;
pub use session::{run_session, run_under_irs, Attach, Coverage, Reaction, RunOptions, RunReport, Session};
pub use state::{Status, VerifierState};
pub use status_report::{status_report, StatusReport};

#[derive(Debug, thiserror::Error)]
pub enum ServiceError {
    #[error(transparent)]
    Replay(#[from] ReplayError),
    #[error(transparent)]
    Store(#[from] store::StoreError),
    #[error(transparent)]
    Input(#[from] input::InputError),
    #[error("cannot start the verifier: {0}")]
    Spawn(std::io::Error),
    #[error("no prefix for {program} after {secs:.0} s (the verifier's log: {log})")]
    NoPrefix { program: String, secs: f64, log: String },
    #[error("the verifier of {program} stopped without publishing a prefix: {why}")]
    VerifierFailed { program: String, why: String },
    #[error("not run (reaction stop): {0}")]
    NotCovered(String),
}

/// The program id of an instrumented binary, read from its module records as its runtime
/// computes it (starting the program to hear its hello cost a run of it). A file that cannot be
/// read that way is started, so that its error is the executor's.
pub fn program_id(program: &str, args: &[String]) -> Result<ProgramId, ServiceError> {
    match crate::launch::resolve_program(program) {
        Ok(exe) => program_id_of(&exe, program, args),
        Err(_) => Ok(executor(program, args, ExecOptions::default())?.hello().program_id),
    }
}

/// [`program_id`] of `program`, found at `exe` already.
pub fn program_id_of(exe: &std::path::Path, program: &str, args: &[String]) -> Result<ProgramId, ServiceError> {
    if let Ok(id) = irs_instrument::instrumented_binary::program_id(exe) {
        return Ok(id);
    }
    let ex = executor(program, args, ExecOptions::default())?;
    Ok(ex.hello().program_id)
}

/// The prefix in force for an input: how many cutoffs its segment's log holds, the latest one,
/// and the constraints within it.
#[derive(Clone, Debug, PartialEq)]
pub struct InForce {
    pub published: usize,
    pub cut: Vec<u32>,
    pub constraints: usize,
}

/// The input's latest published prefix, if its segment exists and is valid (read in place,
/// see [`mapped`]).
pub fn in_force(input: &InputStore) -> Option<InForce> {
    let segment = mapped::Mapped::open(&input.segment())?;
    let v = PrefixView::parse_for_run(segment.bytes(), Some(input.program)).ok()?;
    let cut = v.cutoff(v.published() - 1);
    Some(InForce { published: v.published(), constraints: v.constraints_within(&cut), cut })
}

/// One input of a program as `irs status` shows it.
#[derive(Clone, Debug)]
pub struct InputReport {
    pub store: InputStore,
    pub input: Option<input::Input>,
    pub status: Status,
    pub in_force: Option<InForce>,
    pub queued: bool,
}

/// Every input of the program seen so far, oldest first.
pub fn inputs(id: ProgramId) -> Vec<InputReport> {
    let program = ProgramStore::of(id);
    let queued = queue::queued(&program);
    program
        .inputs()
        .into_iter()
        .map(|store| InputReport { input: store.load().ok(), status: state::status(&store), in_force: in_force(&store), queued: queued.contains(&store.key), store })
        .collect()
}

/// Forget the program's verifications: stop its worker and verifiers, remove every input, its
/// segment, state, log and bug schedules, and the queue. The next `irs run` starts over.
pub fn forget(id: ProgramId) -> usize {
    let program = ProgramStore::of(id);
    stop_verifiers(id);
    let inputs = program.inputs();
    for i in &inputs {
        i.remove();
    }
    // The program's own (pre-input) segment, from `irs verify --publish` run by hand.
    let _ = std::fs::remove_file(shared_proto::prefix_segment::segment_path(id));
    let _ = std::fs::remove_file(anchor::anchor_file(&shared_proto::prefix_segment::segment_path(id)));
    let _ = std::fs::remove_dir_all(&program.dir);
    inputs.len()
}

/// An input `irs run` captured, for `irs verify --input KEY`.
pub struct StoredInput {
    pub store: InputStore,
    pub input: input::Input,
    pub stdin: Vec<u8>,
}

impl StoredInput {
    /// `exec` with this input: its environment and standard input, its files read from the
    /// captures of its verification, in its working directory (the arguments are the caller's
    /// to pass: `self.input.args`).
    pub fn exec_options(&self, exec: ExecOptions) -> ExecOptions {
        let cwd = Some(std::path::PathBuf::from(&self.input.cwd)).filter(|d| !d.as_os_str().is_empty());
        ExecOptions { stdin: self.stdin.clone(), env: Some(self.input.env.clone()), input_files: Some(self.store.files_dir()), cwd, ..exec }
    }
}

/// The stored input `key` of `program`.
pub fn stored_input(program: &str, key: &str) -> Result<StoredInput, ServiceError> {
    let key: input::InputKey = key.parse().map_err(|e: String| ServiceError::Store(store::StoreError::Read { path: key.to_string(), reason: e }))?;
    let id = program_id(program, &[])?;
    let store = ProgramStore::of(id).input(key);
    let input = store.load()?;
    let stdin = store.stdin()?;
    Ok(StoredInput { store, input, stdin })
}

/// Stop the program's background worker and every verifier of its inputs, keeping what they
/// published (for a caller that ends before they do, like `irs demo` interrupted).
pub fn stop_verifiers(id: ProgramId) {
    let program = ProgramStore::of(id);
    if let Some(pid) = worker::pid(&program) {
        if worker::running(&program) {
            state::stop_process(pid);
        }
    }
    for i in program.inputs() {
        if let Some(s) = state::read_state(&i.state_file()).filter(|s| s.state == "running") {
            state::stop_process(s.pid);
        }
    }
}
