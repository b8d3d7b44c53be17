//! `irs bench overhead` (DESIGN §4; IRS paper §5, Fig. 3–4, Appendix A): the execution-time
//! overhead of ENFORCE per constraint count. The first trace comes from a controlled execution
//! under a policy (default: few preemptions, the paper's "-Opt" idea made automatic; or
//! round-robin: many preemptions); every prefix from all its constraints down to none (removing
//! constraints from the end of the trace, as the verifier does) is measured against the plain
//! build, side by side: each round runs the plain build and every prefix once, as separate
//! processes, and the medians of the programs' own work times are compared: what a program
//! prints as `work_us=N` last (the IRS paper's programs time their threads' work), or, for a
//! program that prints none (a real program, the synchronisation benchmarks), the wall time
//! of its process, start-up included, as a user measures it.

use crate::replay::{executor, ReplayError};
use irs_verifier::executor::{Options, Policy};
use crate::service::anchor::{self, Anchor};

/// Which execution the measured prefixes are cut from.
#[derive(Clone, Copy, Debug)]
pub enum FirstTrace {
    /// The controlled execution under this policy.
    Policy(Policy),
    /// The controlled execution that follows a run with real threads (`natural_run`).
    Natural,
    /// The cheaper of `Natural` and the default policy's, timed (`irs verify --publish --anchor
    /// auto`).
    Auto,
}
use shared_proto::prefix_segment;
use shared_proto::requirement_table::RequirementTable;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

#[derive(Debug, thiserror::Error)]
pub enum BenchError {
    #[error(transparent)]
    Replay(#[from] ReplayError),
    #[error("the first execution under this policy did not end normally: {0}")]
    FirstRun(String),
    #[error(transparent)]
    Prefix(#[from] prefix_segment::PrefixError),
    #[error("{0}")]
    Io(String),
    #[error("{program} printed no `work_us=` line where its plain build did")]
    NoWorkTime { program: String },
    #[error("{program} failed ({how}): {stderr}")]
    RunFailed { program: String, how: String, stderr: String },
}

pub struct Config {
    /// `None`: the plain build.
    pub cut: Option<Vec<u32>>,
    pub constraints: usize,
    pub samples: Vec<f64>,
    /// Runs that reported leaving the verified trace.
    pub divergent: usize,
}

impl Config {
    pub fn median(&self) -> f64 {
        let mut v = self.samples.clone();
        v.sort_by(f64::total_cmp);
        if v.is_empty() {
            return f64::NAN;
        }
        let m = v.len() / 2;
        if v.len() % 2 == 1 { v[m] } else { (v[m - 1] + v[m]) / 2.0 }
    }
}

pub struct Report {
    pub plain: Config,
    pub prefixes: Vec<Config>,
    pub total_constraints: usize,
    pub measure: Measure,
    /// Which first trace was taken, when one was chosen (`natural`, `auto`: as `irs verify
    /// --publish --anchor` says it).
    pub note: Option<String>,
}

fn work_us(stdout: &str) -> Option<f64> {
    stdout.lines().rev().find_map(|l| l.trim().strip_prefix("work_us=")).and_then(|v| v.trim().parse().ok())
}

/// What a run's time is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Measure {
    /// The `work_us=` the program prints.
    Work,
    /// The wall time of its process (it prints none).
    Process,
}

impl Measure {
    pub fn name(self) -> &'static str {
        match self {
            Measure::Work => "work time",
            Measure::Process => "process wall time",
        }
    }
}

/// One run's time in µs, by `measure` (`None`: the first run, which decides it), whether it
/// left the verified trace, and the measure taken.
fn run_once(exe: &Path, args: &[String], prefix: Option<&Path>, measure: Option<Measure>) -> Result<(f64, bool, Measure), BenchError> {
    let mut cmd = Command::new(exe);
    cmd.args(args).stdin(Stdio::null()).stdout(Stdio::piped()).stderr(Stdio::piped());
    for v in ["IRS_MODE", "IRS_TRACE", "IRS_CHAOS", "IRS_PREFIX"] {
        cmd.env_remove(v);
    }
    if let Some(p) = prefix {
        cmd.env("IRS_PREFIX", p);
    }
    let started = std::time::Instant::now();
    let out = cmd.output().map_err(|e| BenchError::Io(format!("cannot run {}: {e}", exe.display())))?;
    let wall_us = started.elapsed().as_secs_f64() * 1e6;
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    if !out.status.success() {
        return Err(BenchError::RunFailed { program: exe.display().to_string(), how: out.status.to_string(), stderr: stderr.lines().next().unwrap_or("").to_string() });
    }
    let left = stderr.contains("left the verified trace");
    match (measure, work_us(&stdout)) {
        (Some(Measure::Process), _) => Ok((wall_us, left, Measure::Process)),
        (Some(Measure::Work) | None, Some(w)) => Ok((w, left, Measure::Work)),
        (None, None) => Ok((wall_us, left, Measure::Process)),
        (Some(Measure::Work), None) => Err(BenchError::NoWorkTime { program: exe.display().to_string() }),
    }
}

/// The distinct cutoffs from all constraints down to none, at most `points` of them (always
/// the full one and the empty one).
pub fn cutoffs(table: &RequirementTable, points: Option<usize>) -> Vec<(Vec<u32>, usize)> {
    let total = table.constraints_within(&table.full_cut());
    let mut all: Vec<(Vec<u32>, usize)> = Vec::new();
    for n in (0..=total).rev() {
        let cut = table.cut_keeping(n);
        let c = table.constraints_within(&cut);
        if all.last().map(|l| &l.0) != Some(&cut) {
            all.push((cut, c));
        }
    }
    match points {
        Some(p) if p >= 2 && all.len() > p => {
            let last = all.len() - 1;
            let mut picked: Vec<usize> = (0..p).map(|i| i * last / (p - 1)).collect();
            picked.dedup();
            picked.into_iter().map(|i| all[i].clone()).collect()
        }
        _ => all,
    }
}

#[allow(clippy::too_many_arguments)]
pub fn overhead(
    plain: &Path,
    program: &str,
    args: &[String],
    first_trace: FirstTrace,
    runs: usize,
    points: Option<usize>,
    work_dir: &Path,
    mut progress: impl FnMut(usize, usize),
) -> Result<Report, BenchError> {
    let mut ex = executor(program, args, Options::default())?;
    // As `irs verify --publish --anchor natural|auto` anchors it (`service::anchor`), and falls
    // back.
    let (natural, note) = match first_trace {
        FirstTrace::Natural | FirstTrace::Auto => {
            let exe = crate::launch::resolve_program(program).map_err(ReplayError::from)?;
            let anchor = if matches!(first_trace, FirstTrace::Auto) { Anchor::Auto } else { Anchor::Natural };
            let picked = anchor::pick(&mut ex, anchor, Default::default(), &exe.to_string_lossy(), args).map_err(|e| BenchError::FirstRun(e.to_string()))?;
            let exits = matches!(picked.default.outcome(), shared_proto::Outcome::Exit(_));
            match (picked.use_natural, picked.natural) {
                (true, Some(x)) => (Some(x), picked.note),
                // The default schedule's execution, already run (else the search below).
                _ => (exits.then_some(picked.default), picked.note),
            }
        }
        FirstTrace::Policy(_) => (None, None),
    };
    let policy = match first_trace {
        FirstTrace::Policy(p) => p,
        FirstTrace::Natural | FirstTrace::Auto => Policy::Default,
    };
    let first = match natural {
        Some(x) => x,
        // A run in which a thread halts in a spin-wait is no first trace: then the run with the
        // loops iterating and their read-only iterations left out (`Executor::run_complete`).
        None => match ex.run_complete(policy).map_err(ReplayError::from)? {
            Some(x) => x,
            None => {
                let x = ex.run_with_policy(&[], policy).map_err(ReplayError::from)?;
                return Err(BenchError::FirstRun(x.trace.outcome.to_string()));
            }
        },
    };
    drop(ex);
    let table = RequirementTable::from_trace(&first.trace, Default::default());
    let total_constraints = table.constraints_within(&table.full_cut());
    std::fs::create_dir_all(work_dir).map_err(|e| BenchError::Io(format!("{}: {e}", work_dir.display())))?;
    let mut configs = vec![Config { cut: None, constraints: 0, samples: Vec::new(), divergent: 0 }];
    let mut files: Vec<Option<PathBuf>> = vec![None];
    for (i, (cut, c)) in cutoffs(&table, points).into_iter().enumerate() {
        let bytes = prefix_segment::build(&table, first.trace.program_id, &first.trace.sites, 1, &cut)?;
        let path = work_dir.join(format!("prefix-{i}.bin"));
        std::fs::write(&path, bytes).map_err(|e| BenchError::Io(format!("{}: {e}", path.display())))?;
        files.push(Some(path));
        configs.push(Config { cut: Some(cut), constraints: c, samples: Vec::new(), divergent: 0 });
    }
    let exe = crate::launch::resolve_program(program).map_err(ReplayError::from)?;
    let total = runs * configs.len();
    let mut measure = None;
    for round in 0..runs {
        for (i, file) in files.iter().enumerate() {
            let (w, diverged, m) = match file {
                None => run_once(plain, args, None, measure)?,
                Some(p) => run_once(&exe, args, Some(p), measure)?,
            };
            measure = Some(m);
            configs[i].samples.push(w);
            configs[i].divergent += diverged as usize;
            progress(round * configs.len() + i + 1, total);
        }
    }
    let plain = configs.remove(0);
    Ok(Report { plain, prefixes: configs, total_constraints, measure: measure.unwrap_or(Measure::Work), note })
}

impl Report {
    pub fn overhead_pct(&self, c: &Config) -> f64 {
        (c.median() / self.plain.median() - 1.0) * 100.0
    }

    pub fn markdown(&self, name: &str, policy: &str) -> String {
        let mut s = format!("### {name} ({policy} first trace, {} constraints)\n\n", self.total_constraints);
        if let Some(why) = &self.note {
            s.push_str(&format!("{why}.\n\n"));
        }
        s.push_str(&format!(
            "| constraints | cutoff | median µs ({}) | overhead % |\n| ---: | --- | ---: | ---: |\n| plain | | {:.1} | |\n",
            self.measure.name(),
            self.plain.median()
        ));
        for c in &self.prefixes {
            let cut = c.cut.as_ref().map(|v| v.iter().map(|x| x.to_string()).collect::<Vec<_>>().join(",")).unwrap_or_default();
            let note = if c.divergent > 0 { format!(" ({} runs left the trace)", c.divergent) } else { String::new() };
            s.push_str(&format!("| {} | {} | {:.1} | {:.1}{note} |\n", c.constraints, cut, c.median(), self.overhead_pct(c)));
        }
        s
    }

    pub fn csv_rows(&self, name: &str, policy: &str) -> String {
        let runs = self.plain.samples.len();
        let mut s = String::new();
        for c in &self.prefixes {
            s.push_str(&format!("{name},{policy},{},{:.2},{:.2},{:.2},{runs},{}\n", c.constraints, c.median(), self.plain.median(), self.overhead_pct(c), c.divergent));
        }
        s
    }
}

pub const CSV_HEADER: &str = "program,policy,constraints,median_us,plain_median_us,overhead_pct,runs,divergent_runs\n";

/// Plot every (program, policy) series of a CSV written by [`Report::csv_rows`].
pub fn plot_csv(csv: &str, title: &str) -> String {
    let mut series: Vec<crate::svg_plot::Series> = Vec::new();
    for line in csv.lines().skip(1) {
        let f: Vec<&str> = line.split(',').collect();
        if f.len() < 6 {
            continue;
        }
        let (Ok(x), Ok(y)) = (f[2].parse::<f64>(), f[5].parse::<f64>()) else { continue };
        let name = format!("{} ({})", f[0], f[1]);
        match series.iter_mut().find(|s| s.name == name) {
            Some(s) => s.points.push((x, y)),
            None => series.push(crate::svg_plot::Series { name, points: vec![(x, y)] }),
        }
    }
    crate::svg_plot::line_plot(title, "scheduling constraints", "overhead over the plain build (%)", &series)
}
