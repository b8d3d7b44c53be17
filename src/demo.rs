//! `irs demo`: IRS end to end on a bundled example (docs/src/demo.md; DESIGN §1, §4 and §8
//! "Publishing"; the story of the IRS paper's §5: a program runs safely while it is being
//! verified, and faster as verification advances).
//!
//! The example (`examples/bank.c`) has a schedule-dependent bug: an unlocked read-modify-write
//! that loses a transfer in some interleavings, caught by an assertion. The demo builds it with
//! `irs cc` and plainly with clang, starts its background verifier (`service`), and runs it
//! over and over under the latest published prefix, each run next to a run of the plain build.
//! It prints a line per half second: constraints in force, traces explored, relaxations,
//! violations found, median run times. It shows the bug the verifier finds, with its schedule
//! and the `irs replay` command that reproduces it (and replays it), and checks that no run
//! under IRS failed while the plain build did. The same then for the fixed program
//! (`-DFIXED`), whose prefix falls to nothing. It ends with a table per published prefix and an
//! SVG plot of run time against wall time.

use crate::replay::{self, ReplayError};
use crate::service::store::InputStore;
use crate::service::{self, RunOptions, ServiceError, Session};
use crate::svg_plot::{self, Marker, Series};
use irs_verifier::executor::{Options as ExecOptions, Policy};
use shared_proto::ProgramId;
use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::os::unix::process::ExitStatusExt;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

const EXAMPLE: &str = include_str!("../examples/bank.c");

/// `println!` that ignores a closed stdout: a reader that went away (`irs demo | head`) raises
/// SIGPIPE, which the demo turns into an interruption, so that it stops its verifier first.
macro_rules! say {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        let _ = writeln!(std::io::stdout(), $($arg)*);
    }};
}

/// How long runs go on after the verifier has finished (the steady state).
const TAIL: Duration = Duration::from_millis(1500);
/// A verifier that has not finished by then is stopped, and the demo fails.
const ACT_LIMIT: Duration = Duration::from_secs(150);
/// One status line per this much time.
const LINE_EVERY: Duration = Duration::from_millis(500);

#[derive(Debug, thiserror::Error)]
pub enum DemoError {
    #[error("cannot prepare {0}: {1}")]
    Io(String, std::io::Error),
    #[error("building the example failed: {0}")]
    Build(String),
    #[error(transparent)]
    Service(#[from] ServiceError),
    #[error(transparent)]
    Replay(#[from] ReplayError),
    #[error("interrupted; the verifier of {0} was stopped")]
    Interrupted(String),
    #[error("the verifier of {0} did not finish within {1} s; it was stopped")]
    TooSlow(String, u64),
    #[error("{failed} of {runs} runs of {program} under IRS failed: IRS did not keep the bug out")]
    Unsafe { program: String, failed: usize, runs: usize },
    #[error("{0}")]
    Unexpected(String),
}

/// One act of the demo: a build of the example.
struct Act {
    name: &'static str,
    defines: &'static [&'static str],
    about: &'static str,
}

const ACTS: [Act; 2] = [
    Act {
        name: "bank",
        defines: &[],
        about: "the bank with its bug: interest is paid by an unlocked read-modify-write of account 0",
    },
    Act { name: "bank_fixed", defines: &["-DFIXED"], about: "the same bank fixed (-DFIXED): the interest payer holds the account's mutex throughout" },
];

/// One run of the instrumented build under IRS, or of the plain build next to it.
struct Run {
    /// Since the verifier was started.
    at: f64,
    ok: bool,
    /// The program's own time for its threads (`work_us=`), else the process's.
    micros: f64,
    process_micros: f64,
    /// Cutoffs published when the run started (IRS runs only).
    published: Option<usize>,
}

/// What one act measured.
struct Story {
    name: &'static str,
    input: InputStore,
    irs: Vec<Run>,
    plain: Vec<Run>,
    bug_seen: Option<f64>,
    finished: f64,
    state: service::VerifierState,
    /// Every published cutoff: (cut, constraints).
    log: Vec<(Vec<u32>, usize)>,
}

/// Set by SIGINT, SIGTERM and SIGPIPE while the demo runs.
static INTERRUPTED: AtomicBool = AtomicBool::new(false);

extern "C" fn on_signal(_: libc::c_int) {
    INTERRUPTED.store(true, Ordering::SeqCst);
}

/// Stops the act's background verifier if the demo ends before the verifier did (error,
/// interrupt, panic).
struct VerifierGuard(ProgramId);

impl Drop for VerifierGuard {
    fn drop(&mut self) {
        service::stop_verifiers(self.0);
    }
}

fn io(p: &Path) -> impl FnOnce(std::io::Error) -> DemoError {
    let p = p.display().to_string();
    move |e| DemoError::Io(p, e)
}

fn step(n: u32, what: &str) {
    say!("\n== {n}. {what}");
}

fn median(mut v: Vec<f64>) -> Option<f64> {
    if v.is_empty() {
        return None;
    }
    v.sort_by(f64::total_cmp);
    let n = v.len();
    Some(if n % 2 == 1 { v[n / 2] } else { (v[n / 2 - 1] + v[n / 2]) / 2.0 })
}

fn ms(us: Option<f64>) -> String {
    us.map_or("-".into(), |u| format!("{:.2} ms", u / 1000.0))
}

fn relative(irs: Option<f64>, plain: Option<f64>) -> String {
    match (irs, plain) {
        (Some(a), Some(b)) if b > 0.0 => format!("{:+.0}%", (a / b - 1.0) * 100.0),
        _ => "-".into(),
    }
}

/// The program's own time (`work_us=N`, its last line), if it printed one.
fn work_micros(stdout: &[u8]) -> Option<f64> {
    String::from_utf8_lossy(stdout).lines().rev().find_map(|l| l.strip_prefix("work_us=")?.trim().parse().ok())
}

fn build(dir: &Path, act: &Act) -> Result<(PathBuf, PathBuf), DemoError> {
    let src = dir.join("bank.c");
    let exe = dir.join(act.name);
    let plain = dir.join(format!("{}.plain", act.name));
    let s = |p: &Path| p.display().to_string();
    let mut args: Vec<String> = vec!["-O2".into()];
    args.extend(act.defines.iter().map(|d| d.to_string()));
    args.extend(["-o".into(), s(&exe), s(&src)]);
    say!("  irs cc {}", args.join(" "));
    match irs_instrument::driver::run_cc(&args) {
        Ok(0) => {}
        Ok(code) => return Err(DemoError::Build(format!("irs cc exited with {code}"))),
        Err(e) => return Err(DemoError::Build(format!("irs cc: {e}"))),
    }
    let clang = irs_instrument::toolchain::clang();
    let mut plain_args: Vec<String> = vec!["-O2".into(), "-pthread".into()];
    plain_args.extend(act.defines.iter().map(|d| d.to_string()));
    plain_args.extend(["-o".into(), s(&plain), s(&src)]);
    say!("  {} {}   (the plain build, for comparison)", clang.display(), plain_args.join(" "));
    let out = Command::new(&clang).args(&plain_args).output().map_err(io(&clang))?;
    if !out.status.success() {
        return Err(DemoError::Build(format!("{} failed: {}", clang.display(), String::from_utf8_lossy(&out.stderr).trim())));
    }
    Ok((exe, plain))
}

/// Run one act: its verifier from scratch, runs under IRS next to plain runs until the
/// verifier has finished (and a little longer), with a status line every half second.
fn act(exe: &Path, plain: &Path, name: &'static str) -> Result<Story, DemoError> {
    let program = exe.display().to_string();
    let id = service::program_id(&program, &[])?;
    // Start fresh: a segment or verifier left by an earlier demo would skip the story.
    service::forget(id);
    let _guard = VerifierGuard(id);
    let opts = RunOptions {
        repeat: 0,
        every: Duration::ZERO,
        no_wait: false,
        wait_limit: Duration::from_secs(60),
        chaos: false,
        reaction: service::Reaction::Serial,
        env: service::input::EnvSelection::All,
        capture_limit: service::input::DEFAULT_CAPTURE_LIMIT,
        // The story was written for the default schedule's anchor (its prefixes shrink step
        // by step from the first run on): a trial of anchors would only delay it.
        anchor: service::anchor::Anchor::Default,
    };
    let t0 = Instant::now();
    let session = Session::attach(&program, &[], &opts, |a| {
        if let service::Attach::Queued { key, worker_started: Some(pid) } = a {
            say!("  started the background verifier (pid {pid}) of its input {key}: irs verify --publish --input {key} -- {program}");
        }
    })?;
    let input = session.input.clone().ok_or_else(|| DemoError::Unexpected("the demo's input was not kept".into()))?;
    let log = published_log(&input)?;
    say!(
        "  the first prefix was there after {:.2} s: its first execution, {} constraints; {} relaxations published by now, {} constraints in force",
        t0.elapsed().as_secs_f64(),
        log.first().map_or(0, |l| l.1),
        log.len().saturating_sub(1),
        log.last().map_or(0, |l| l.1)
    );
    let mut shown_prefix = log.len();
    let mut story = Story { name, input: input.clone(), irs: Vec::new(), plain: Vec::new(), bug_seen: None, finished: 0.0, state: Default::default(), log: Vec::new() };
    let mut finished: Option<Instant> = None;
    let mut last_line = Instant::now();
    let (mut from_irs, mut from_plain) = (0, 0);
    let mut index = 0;
    loop {
        if INTERRUPTED.load(Ordering::SeqCst) {
            return Err(DemoError::Interrupted(program));
        }
        let (r, out) = session.run_captured(index)?;
        index += 1;
        story.irs.push(Run {
            at: t0.elapsed().as_secs_f64(),
            ok: r.status.success(),
            micros: work_micros(&out.stdout).unwrap_or(r.micros as f64),
            process_micros: r.micros as f64,
            published: match &r.coverage {
                service::Coverage::Verified(p) => Some(p.published),
                _ => None,
            },
        });
        if r.status.signal() == Some(libc::SIGINT) {
            return Err(DemoError::Interrupted(program));
        }
        let started = Instant::now();
        let p = Command::new(plain).stdin(std::process::Stdio::null()).output().map_err(io(plain))?;
        let process_micros = started.elapsed().as_micros() as f64;
        story.plain.push(Run {
            at: t0.elapsed().as_secs_f64(),
            ok: p.status.success(),
            micros: work_micros(&p.stdout).unwrap_or(process_micros),
            process_micros,
            published: None,
        });
        let st = service::state::read_state(&input.state_file()).unwrap_or_default();
        let mut news = Vec::new();
        if story.bug_seen.is_none() && !st.violations.is_empty() {
            story.bug_seen = Some(t0.elapsed().as_secs_f64());
            news.push(format!("the verifier found a bug: {}", st.violations[0]));
        }
        let published = story.irs.last().and_then(|r| r.published);
        if published.is_some_and(|p| p != shown_prefix) {
            shown_prefix = published.unwrap_or(0);
            news.push(format!("relaxed: {} constraints in force from run {} on", r.constraints().unwrap_or(0), story.irs.len()));
        }
        if finished.is_none() && st.state != "running" {
            finished = Some(Instant::now());
            story.finished = t0.elapsed().as_secs_f64();
            news.push(format!("verification {} after {:.1} s: verdict {}", if st.state == "done" { "finished" } else { "ended" }, st.seconds, st.verdict.as_deref().unwrap_or("none")));
        }
        if last_line.elapsed() >= LINE_EVERY || !news.is_empty() {
            for n in &news {
                say!("  >> {n}");
            }
            let irs = &story.irs[from_irs..];
            let pl = &story.plain[from_plain..];
            let m_irs = median(irs.iter().filter(|r| r.ok).map(|r| r.micros).collect());
            let m_plain = median(pl.iter().filter(|r| r.ok).map(|r| r.micros).collect());
            say!(
                "  {:>5.1} s | runs {:>4}-{:<4} | {:>2} constraints in force | traces {:>5} | relaxations {:>2} | violations found {} | run {} (plain {}, {}) | failed: IRS {}, plain {}",
                t0.elapsed().as_secs_f64(),
                from_irs + 1,
                story.irs.len(),
                service::in_force(&input).map(|p| p.constraints).map_or("?".into(), |c| c.to_string()),
                st.traces,
                st.published.saturating_sub(1),
                st.violations.len(),
                ms(m_irs),
                ms(m_plain),
                relative(m_irs, m_plain),
                story.irs.iter().filter(|r| !r.ok).count(),
                story.plain.iter().filter(|r| !r.ok).count(),
            );
            last_line = Instant::now();
            from_irs = story.irs.len();
            from_plain = story.plain.len();
        }
        if finished.is_some_and(|f| f.elapsed() >= TAIL) {
            story.state = st;
            break;
        }
        if t0.elapsed() > ACT_LIMIT {
            return Err(DemoError::TooSlow(program, ACT_LIMIT.as_secs()));
        }
    }
    story.log = published_log(&input)?;
    Ok(story)
}

/// Every cutoff published to the program's segment, with its constraints.
fn published_log(input: &InputStore) -> Result<Vec<(Vec<u32>, usize)>, DemoError> {
    let seg = input.segment();
    let bytes = std::fs::read(&seg).map_err(io(&seg))?;
    let view = shared_proto::prefix_segment::PrefixView::parse(&bytes, Some(input.program)).map_err(|e| DemoError::Unexpected(format!("{}: {e}", seg.display())))?;
    Ok((0..view.published()).map(|i| (view.cutoff(i), view.constraints_within(&view.cutoff(i)))).collect())
}

/// The bug the verifier found: its schedule, copied next to the program, replayed.
fn show_bug(dir: &Path, exe: &Path, input: &InputStore) -> Result<PathBuf, DemoError> {
    let bugs = input.bugs_dir();
    let mut files: Vec<PathBuf> = std::fs::read_dir(&bugs)
        .map_err(io(&bugs))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "schedule"))
        .collect();
    files.sort();
    let Some(found) = files.first() else { return Err(DemoError::Unexpected(format!("the verifier reported a bug but wrote no schedule in {}", bugs.display()))) };
    let schedule_file = dir.join(found.file_name().unwrap_or_default());
    std::fs::copy(found, &schedule_file).map_err(io(&schedule_file))?;
    let schedule = replay::read_schedule(&schedule_file)?;
    say!("  its schedule: {} ({} scheduling decisions)", schedule_file.display(), schedule.len());
    say!("  reproduce it: irs replay --schedule {} -- {}", schedule_file.display(), exe.display());
    let run = replay::replay(&exe.display().to_string(), &[], &schedule, Policy::Default, ExecOptions::default(), None)?;
    say!("  replayed here: {}", run.trace.outcome);
    if replay::exit_code(&run.trace.outcome) != 1 {
        return Err(DemoError::Unexpected(format!("the bug's schedule replayed to `{}`, not to the bug", run.trace.outcome)));
    }
    Ok(schedule_file)
}

/// The prefix in force at the end, as edges, and what the barrier holds back.
fn show_prefix(input: &InputStore) -> Result<(), DemoError> {
    let seg = input.segment();
    let text = crate::constrain::show(&seg).map_err(|e| DemoError::Unexpected(e.to_string()))?;
    let in_force = service::in_force(input).ok_or_else(|| DemoError::Unexpected(format!("{} vanished", seg.display())))?;
    let cut: Vec<String> = in_force.cut.iter().map(|c| c.to_string()).collect();
    say!("  prefix in force ({}): cutoff {} = events per thread T0..T{}", seg.display(), cut.join(","), in_force.cut.len() - 1);
    for l in text.lines().filter(|l| !l.starts_with('#')) {
        say!("    {l}");
    }
    let held: Vec<String> = in_force.cut.iter().enumerate().filter(|(_, c)| **c > 0).map(|(t, c)| format!("T{t} its first {c}")).collect();
    if !held.is_empty() {
        say!("  and the barrier (rule 2): no thread goes beyond the prefix before {} events are done", held.join(", "));
    }
    Ok(())
}

/// Per published prefix: the runs under it and their median times, next to the plain runs
/// made alongside them.
fn summary(story: &Story, out: &mut String) {
    let _ = writeln!(out, "\n{}: verification {} in {:.1} s ({} traces, {} executions), verdict {}", story.name, if story.state.state == "done" { "finished" } else { "ended" }, story.state.seconds, story.state.traces, story.state.executions, story.state.verdict.as_deref().unwrap_or("none"));
    let _ = writeln!(out, "| prefix | cutoff | constraints | first run under it | runs | run | plain run | vs plain | process | plain process |");
    let _ = writeln!(out, "| ---: | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |");
    let mut groups: BTreeMap<usize, Vec<usize>> = BTreeMap::new();
    for (i, r) in story.irs.iter().enumerate() {
        groups.entry(r.published.unwrap_or(0)).or_default().push(i);
    }
    for (p, (cut, constraints)) in story.log.iter().enumerate() {
        let idx = groups.get(&(p + 1)).cloned().unwrap_or_default();
        let cut: Vec<String> = cut.iter().map(|c| c.to_string()).collect();
        let irs = median(idx.iter().filter(|&&i| story.irs[i].ok).map(|&i| story.irs[i].micros).collect());
        let process = median(idx.iter().map(|&i| story.irs[i].process_micros).collect());
        let plain_runs: Vec<&Run> = idx.iter().filter_map(|&i| story.plain.get(i)).collect();
        let plain = median(plain_runs.iter().filter(|r| r.ok).map(|r| r.micros).collect());
        let plain_process = median(plain_runs.iter().map(|r| r.process_micros).collect());
        let _ = writeln!(
            out,
            "| {} | {} | {} | {} | {} | {} | {} | {} | {} | {} |",
            p + 1,
            cut.join(","),
            constraints,
            idx.first().map_or("-".into(), |&i| format!("{:.2} s", story.irs[i].at)),
            idx.len(),
            ms(irs),
            ms(plain),
            relative(irs, plain),
            ms(process),
            ms(plain_process)
        );
    }
}

/// Median run times per time window of one act, as plot points.
fn windows(runs: &[Run]) -> Vec<(f64, f64)> {
    let mut by: BTreeMap<u64, Vec<f64>> = BTreeMap::new();
    for r in runs.iter().filter(|r| r.ok) {
        by.entry((r.at / 0.5) as u64).or_default().push(r.micros);
    }
    by.into_iter().filter_map(|(w, v)| Some((w as f64 * 0.5 + 0.25, median(v)? / 1000.0))).collect()
}

/// Run the demo in `dir` (created if needed); prints as it goes.
pub fn run(dir: &Path) -> Result<(), DemoError> {
    std::fs::create_dir_all(dir).map_err(io(dir))?;
    let dir = std::path::absolute(dir).map_err(io(dir))?;
    let src = dir.join("bank.c");
    std::fs::write(&src, EXAMPLE).map_err(io(&src))?;
    INTERRUPTED.store(false, Ordering::SeqCst);
    const SIGNALS: [libc::c_int; 3] = [libc::SIGINT, libc::SIGTERM, libc::SIGPIPE];
    // SAFETY: the handler only stores to an atomic, which is async-signal-safe.
    let old = SIGNALS.map(|sig| unsafe { libc::signal(sig, on_signal as *const () as libc::sighandler_t) });
    let result = run_acts(&dir);
    for (sig, old) in SIGNALS.into_iter().zip(old) {
        // SAFETY: restoring the disposition found at the start.
        unsafe { libc::signal(sig, old) };
    }
    result
}

fn run_acts(dir: &Path) -> Result<(), DemoError> {
    let started = Instant::now();
    let mut stories = Vec::new();
    let mut markers = Vec::new();
    let mut n = 0;
    for a in &ACTS {
        n += 1;
        step(n, &format!("build {}: {}", a.name, a.about));
        let (exe, plain) = build(dir, a)?;
        n += 1;
        step(n, &format!("run {} under IRS while it is verified, and the plain build next to it", a.name));
        say!("  (a line per 0.5 s: constraints in force, verification progress, median run times of the program's threads; `failed` counts runs that did not exit 0)");
        let story = act(&exe, &plain, a.name)?;
        let input = story.input.clone();
        n += 1;
        step(n, &format!("what happened to {}", a.name));
        let irs_failed = story.irs.iter().filter(|r| !r.ok).count();
        let plain_failed = story.plain.iter().filter(|r| !r.ok).count();
        say!(
            "  verification took {:.1} s: {} traces, {} executions, verdict {}",
            story.state.seconds,
            story.state.traces,
            story.state.executions,
            story.state.verdict.as_deref().unwrap_or("none")
        );
        say!("  {} prefixes published: constraints {}", story.log.len(), story.log.iter().map(|(_, c)| c.to_string()).collect::<Vec<_>>().join(" -> "));
        for v in &story.state.violations {
            say!("  found: {v}");
        }
        if !story.state.violations.is_empty() {
            show_bug(dir, &exe, &input)?;
            say!("  The verifier publishes nothing after a bug: the prefix in force excludes it for good, so {} keeps running safely with it (IRS's \"use programs with bugs\").", a.name);
        }
        show_prefix(&input)?;
        say!("  runs under IRS: {} of {} exited 0 (every exit status checked)", story.irs.len() - irs_failed, story.irs.len());
        say!("  plain build, same loop: {} of {} runs failed{}", plain_failed, story.plain.len(), if plain_failed > 0 { " (the assertion: the bug, in production without IRS)" } else { "" });
        if irs_failed > 0 {
            return Err(DemoError::Unsafe { program: a.name.into(), failed: irs_failed, runs: story.irs.len() });
        }
        if let Some(t) = story.bug_seen {
            markers.push(Marker { x: t, label: format!("{}: bug found", a.name) });
        }
        markers.push(Marker { x: story.finished, label: format!("{}: verified", a.name) });
        stories.push(story);
    }
    n += 1;
    step(n, "summary: runs per published prefix");
    say!("  run = the program's own time for its threads (first pthread_create to last join), process = the whole process; medians; plain = the plain build's runs made alongside");
    let mut text = String::new();
    for s in &stories {
        summary(s, &mut text);
    }
    say!("{}", text.trim_end());
    let mut series = Vec::new();
    for s in &stories {
        series.push(Series { name: format!("{} under IRS", s.name), points: windows(&s.irs) });
        series.push(Series { name: format!("{} plain", s.name), points: windows(&s.plain) });
    }
    let svg = dir.join("irs-demo.svg");
    let plot = svg_plot::line_plot_marked("irs demo: median run time per 0.5 s while the verifier works", "seconds since the verifier started", "ms", &series, &markers);
    std::fs::write(&svg, plot).map_err(io(&svg))?;
    say!("\nPlot of run time against wall time: {}", svg.display());
    say!("Done in {:.1} s. The files are in {}.", started.elapsed().as_secs_f64(), dir.display());
    Ok(())
}
