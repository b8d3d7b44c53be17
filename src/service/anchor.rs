//! Which execution `irs verify --publish` anchors the published table on (DESIGN §4 and §8,
//! "Choosing `τ` matters for speed"; docs/src/service.md, "Publishing"). Any complete, correct
//! execution is a valid first execution of the exploration, so this changes what production
//! runs pay, never what is verified:
//!
//! - `default`: the default policy's execution (each thread as long as it can); if it does not
//!   end correctly, one found by search (spin-waits iterating, then random runs);
//! - `natural`: the program's own order of events (`irs_verifier::natural_run`), else `default`;
//! - `auto` (what `irs verify --publish` and `irs run` do unless told): both, timed under their
//!   whole traces as prefixes (`irs_verifier::anchor_trial`): the cheaper one.
//!
//! A segment anchored on a natural run keeps that run's schedule beside it ([`anchor_file`]): a
//! verifier restarted on the segment runs it again, gets the same table and takes the segment
//! over, whatever it was asked to anchor on.

use irs_verifier::executor::{Execution, Executor, Policy};
use irs_verifier::qpor::VerifyError;
use shared_proto::requirement_table::RequirementTable;
use shared_proto::{Outcome, ThreadId};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// What to anchor on (`--anchor`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Anchor {
    Default,
    Natural,
    #[default]
    Auto,
}

impl Anchor {
    pub const NAMES: [&'static str; 3] = ["default", "natural", "auto"];

    pub fn parse(name: &str) -> Option<Anchor> {
        match name {
            "default" => Some(Anchor::Default),
            "natural" => Some(Anchor::Natural),
            "auto" => Some(Anchor::Auto),
            _ => None,
        }
    }

    pub fn name(self) -> &'static str {
        Anchor::NAMES[self as usize]
    }
}

/// How many random runs to try for a correct execution to anchor a published prefix on, when
/// the default schedule fails.
const ANCHOR_TRIES: u64 = 1000;
/// ... and for how long at most (runs that end at the event limit take tens of ms each: a
/// thousand of them kept `irs run` waiting for a minute).
const ANCHOR_TIME: Duration = Duration::from_secs(10);
/// How long `auto` times the candidates for at most (at least a few rounds each).
const TRIAL_BUDGET: Duration = Duration::from_secs(3);
/// A natural run that took longer is not timed against the default one: `auto` keeps the
/// default anchor (the trial would delay the first prefix by many such runs).
const TRIAL_MAX_RUN: Duration = Duration::from_millis(500);

/// Where a verifier that anchored `segment` on a natural run keeps that run's schedule. Removed
/// with the segment.
pub fn anchor_file(segment: &Path) -> PathBuf {
    let mut name = segment.as_os_str().to_os_string();
    name.push(".anchor");
    PathBuf::from(name)
}

/// The anchor chosen: the first execution's schedule (`None`: the default schedule), what to
/// say of it, and, when no correct execution was found, why nothing can be published.
#[derive(Default)]
pub struct Chosen {
    pub first_schedule: Option<Vec<ThreadId>>,
    pub note: Option<String>,
    pub error: Option<String>,
}

/// The candidates and which one `anchor` picks (before any search: the default execution may
/// not end correctly).
pub struct Picked {
    pub natural: Option<Execution>,
    pub default: Execution,
    pub use_natural: bool,
    /// What to say of the choice.
    pub note: Option<String>,
}

/// Pick between the default schedule's execution and a natural one as `anchor` says (`auto`:
/// timed under their whole traces as prefixes, the tables built under `equivalence`).
pub fn pick(ex: &mut Executor, anchor: Anchor, equivalence: shared_proto::equivalence::Equivalence, program: &str, args: &[String]) -> Result<Picked, VerifyError> {
    let exits = |x: &Execution| matches!(x.outcome(), Outcome::Exit(_));
    let default = ex.run(&[])?;
    let (natural, mut note) = match anchor {
        Anchor::Default => (None, None),
        _ => match irs_verifier::natural_run::natural_anchor(ex, Path::new(program), args, default.trace.events.len())? {
            Ok((x, took)) => (Some((x, took)), None),
            Err(why) => (None, Some(format!("no natural run to anchor on ({why}): the prefix is anchored on the default schedule"))),
        },
    };
    let use_natural = match (&natural, anchor) {
        (None, _) => false,
        (Some(_), Anchor::Natural) => {
            note = Some("the prefix is anchored on the program's own order of events (--anchor natural)".into());
            true
        }
        (Some(_), _) if !exits(&default) => {
            note = Some(format!("the prefix is anchored on the program's own order of events (--anchor auto: the default schedule ends in `{}`)", default.outcome()));
            true
        }
        (Some((_, took)), _) if *took > TRIAL_MAX_RUN => {
            note = Some("the prefix is anchored on the default schedule (--anchor auto: a run takes too long to time both anchors)".into());
            false
        }
        (Some((x, _)), _) => {
            let bytes = |t: &shared_proto::Trace| {
                let table = RequirementTable::from_trace(t, equivalence);
                shared_proto::prefix_segment::build(&table, t.program_id, &t.sites, 1, &table.full_cut()).ok()
            };
            match (bytes(&x.trace), bytes(&default.trace)) {
                (Some(n), Some(d)) => match irs_verifier::anchor_trial::median_times(Path::new(program), args, ex.options(), &[n, d], TRIAL_BUDGET) {
                    Ok(m) => {
                        let natural_wins = m[0] < m[1];
                        note = Some(format!(
                            "the prefix is anchored on the {} (--anchor auto: a run under the whole of the natural one took {:.1} ms, of the default one {:.1} ms)",
                            if natural_wins { "program's own order of events" } else { "default schedule" },
                            m[0].as_secs_f64() * 1e3,
                            m[1].as_secs_f64() * 1e3
                        ));
                        natural_wins
                    }
                    Err(e) => {
                        note = Some(format!("the prefix is anchored on the default schedule (--anchor auto: the anchors could not be timed: {e})"));
                        false
                    }
                },
                _ => false,
            }
        }
    };
    Ok(Picked { natural: natural.map(|(x, _)| x), default, use_natural, note })
}

/// Choose, as `anchor` says, the anchor of the table to publish at `segment` (built under
/// `equivalence`) for the program `ex` runs (`program ARGS`).
pub fn choose(ex: &mut Executor, segment: &Path, anchor: Anchor, equivalence: shared_proto::equivalence::Equivalence, program: &str, args: &[String]) -> Result<Chosen, VerifyError> {
    let kept = anchor_file(segment);
    if let Some(s) = earlier(ex, segment, &kept)? {
        let note = "the prefix is anchored on the natural order of events an earlier verifier of it anchored on".to_string();
        return Ok(Chosen { first_schedule: Some(s), note: Some(note), error: None });
    }
    let exits = |x: &Execution| matches!(x.outcome(), Outcome::Exit(_));
    let Picked { natural, default, use_natural, note } = pick(ex, anchor, equivalence, program, args)?;
    if let (true, Some(x)) = (use_natural, natural) {
        let s = x.schedule();
        keep(&kept, &s);
        return Ok(Chosen { first_schedule: Some(s), note, error: None });
    }
    // Anchored on the default schedule: a schedule left beside the segment by another anchor is
    // not this segment's.
    let _ = std::fs::remove_file(&kept);
    if exits(&default) {
        return Ok(Chosen { first_schedule: None, note, error: None });
    }
    // First the default schedule with spin-waits iterating, their read-only iterations then left
    // out (`Policy::Anchor`); then random schedules. Either must end correctly when run as the
    // exploration runs it.
    let started = Instant::now();
    let found = ex
        .run_complete(Policy::Default)
        .ok()
        .flatten()
        .or_else(|| (0..ANCHOR_TRIES).take_while(|_| started.elapsed() < ANCHOR_TIME).find_map(|seed| ex.run_random(&[], seed).ok().filter(exits)));
    Ok(match found {
        Some(x) => Chosen {
            first_schedule: Some(x.schedule()),
            note: Some(format!("the default schedule ends in `{}`; the prefix is anchored on a correct execution found by search", default.outcome())),
            error: None,
        },
        None => Chosen {
            first_schedule: None,
            note,
            error: Some(format!(
                "the default schedule ends in `{}` and no random execution ended correctly (at most {ANCHOR_TRIES} in {} s): no prefix to publish",
                default.outcome(),
                ANCHOR_TIME.as_secs()
            )),
        },
    })
}

/// The schedule an earlier verifier anchored `segment` on, if it kept one and it still runs to
/// a correct end.
fn earlier(ex: &mut Executor, segment: &Path, kept: &Path) -> Result<Option<Vec<ThreadId>>, VerifyError> {
    if !segment.exists() {
        return Ok(None);
    }
    let Some(s) = std::fs::read_to_string(kept).ok().and_then(|t| irs_verifier::schedule::parse(&t).ok()) else {
        return Ok(None);
    };
    Ok(matches!(ex.run(&s)?.outcome(), Outcome::Exit(_)).then_some(s))
}

/// Keep `schedule` at `kept` (written whole or not at all). Without it, a restarted verifier
/// finds another first execution and says so: nothing wrong is published either way.
fn keep(kept: &Path, schedule: &[ThreadId]) {
    let tmp = kept.with_extension(format!("anchor.tmp{}", std::process::id()));
    if std::fs::write(&tmp, irs_verifier::schedule::format(schedule)).and_then(|()| std::fs::rename(&tmp, kept)).is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
}
