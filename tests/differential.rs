//! A differential campaign of `irs verify` against the brute-force oracle (the guide's independent
//! oracle): random small programs (`tests/common/program_gen.rs`: a few threads; mutexes, trylock,
//! shared words, heap blocks, assertions on values read; threads joined, detached or never joined;
//! `exit` from any thread; `pthread_exit` from main; nested creation; `atexit`; in about a third of
//! them a synchronisation scenario: condition variables, semaphores, `pthread_once`, barriers,
//! rwlocks, a recursive mutex or spin-waits, with their lost wake-ups, deadlocks and livelocks),
//! each built with `irs cc -O1 -pthread`, explored by the oracle (`tests/common/oracle.rs`: every
//! interleaving, grouped into traces under both equivalences) and by `irs verify` in six modes:
//! `--optimal --no-snapshots`, `--optimal --snapshot-gap 1` (a snapshot at every backtracking
//! point), `--k 1`, `--k 2` and `--optimal --no-race-free-words` (reads commuting, the default),
//! and `--optimal --equivalence mazurkiewicz`. Each report is checked with
//! `verify_check::check_report`: the verdict, the exit code, the set of bugs (every violation's
//! schedule replayed to its bug), and the traces (optimal modes: exactly the oracle's, each once,
//! no SSB; k modes: every oracle trace covered), every `--schedules-out` line replayed and
//! canonicalised.
//!
//! By default a fixed slice of seeds (`SLICE`: 80 programs, about 16 s on this 2-core machine)
//! runs, and the test also checks that the slice exercises every feature the generator has
//! (`MIN_FEATURES`) and has both safe and buggy programs, so that it cannot silently become
//! trivial (other seeds are not held to these minimums). Environment:
//! - `IRS_DIFF_SEEDS=N` runs N programs (or `IRS_DIFF_SEEDS=A..B`: seeds A to B-1) instead of the
//!   slice; `IRS_DIFF_FIRST=S` makes the first seed S (default 0; alone, it runs as many programs
//!   as the slice from S). The long campaign (benchmarks/differential/run.py) runs this way.
//! - `IRS_DIFF_JOBS=N`: programs checked at once (default 2).
//! - `IRS_DIFF_SCENARIO=NAME`: every program gets the synchronisation scenario NAME (`rwlock`,
//!   `cond`, `sem`, `once`, `barrier`, `recursive`, `spin`, `atomics`) and no other: a campaign on one
//!   primitive (the slice's feature minimums are then not checked).
//! - `IRS_DIFF_SOURCE=FILE.c` checks that C file instead of a generated program (one run; for
//!   trying variants of a program that disagreed).
//! - `IRS_DIFF_KEEP=DIR`: write every program's source (`seed_N.c`) and one JSON line per
//!   program (`results.jsonl`: seed, features, the oracle's and every mode's counts, failures)
//!   into DIR, for run.py and for running other tools on the same programs.
//!
//! Sources and work directories are in target/test-scratch/differential/; those of programs that
//! pass are removed, those of a disagreement are kept and named in the failure message.

mod common;
#[path = "common/oracle.rs"]
mod oracle;
#[path = "common/program_gen.rs"]
mod program_gen;
#[path = "common/verify_check.rs"]
mod verify_check;

use common::*;
use irs_verifier::executor::{Executor, Options};
use std::collections::BTreeMap;
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;
use std::time::Instant;
use verify_check::{check_report, run_verify};

/// The seeds of the test suite's slice.
const SLICE: std::ops::Range<u64> = 0..80;

/// The oracle refuses programs with more interleavings than this (the generator's programs have
/// at most `program_gen::MAX_ESTIMATE` in its model, and fewer in fact).
const MAX_INTERLEAVINGS: usize = 50_000;

/// The modes of `irs verify` every program runs in: (name for `check_report`, arguments).
/// Names starting with `optimal` are checked for exact counts.
const MODES: &[(&str, &[&str])] = &[
    ("optimal-nosnap", &["--optimal", "--no-snapshots"]),
    ("optimal-gap1", &["--optimal", "--snapshot-gap", "1"]),
    ("k1", &["--k", "1"]),
    ("k2", &["--k", "2"]),
    ("optimal-all-words", &["--optimal", "--no-race-free-words"]),
    ("optimal-mazurkiewicz", &["--optimal", "--equivalence", "mazurkiewicz"]),
];

/// Over the slice, at least this many programs must have each feature (about half of what the
/// slice has: a generator change that loses a feature fails here).
const MIN_FEATURES: &[(&str, usize)] = &[
    ("mutex", 15),
    ("nested-locks", 2),
    ("trylock", 8),
    ("branch", 10),
    ("incr", 10),
    ("heap-main", 10),
    ("heap-main-arg", 5),
    ("heap-main-global", 5),
    ("heap-own", 8),
    ("heap-publish", 3),
    ("assert-may-fail", 20),
    ("main-check", 20),
    ("nested-create", 6),
    ("joined", 25),
    ("detached", 8),
    ("never-joined", 6),
    ("child-joined", 4),
    ("child-detached", 1),
    ("child-never-joined", 1),
    ("thread-return", 20),
    ("thread-pthread-exit", 15),
    ("thread-exit", 8),
    ("thread-_exit", 2),
    ("thread-end-if", 2),
    ("main-return", 15),
    ("main-pthread-exit", 8),
    ("main-exit", 8),
    ("atexit", 5),
];

/// Over the slice, at least this many programs must have a bug, none, a deadlock, and 3 threads.
const MIN_BUGGY: usize = 15;
const MIN_SAFE: usize = 15;
const MIN_DEADLOCK: usize = 1;
const MIN_THREE_THREADS: usize = 3;

fn seeds() -> (Vec<u64>, bool) {
    let first: u64 = std::env::var("IRS_DIFF_FIRST").ok().map(|v| v.trim().parse().expect("IRS_DIFF_FIRST: a number")).unwrap_or(0);
    match std::env::var("IRS_DIFF_SEEDS") {
        Ok(v) if !v.trim().is_empty() => {
            let v = v.trim();
            if let Some((a, b)) = v.split_once("..") {
                let a: u64 = a.parse().expect("IRS_DIFF_SEEDS=A..B");
                let b: u64 = b.parse().expect("IRS_DIFF_SEEDS=A..B");
                ((a..b).collect(), false)
            } else {
                let n: u64 = v.parse().expect("IRS_DIFF_SEEDS: a number or A..B");
                ((first..first + n).collect(), false)
            }
        }
        _ if std::env::var("IRS_DIFF_SOURCE").is_ok() => (vec![first], false),
        _ if first != 0 => ((first..first + (SLICE.end - SLICE.start)).collect(), false),
        _ => (SLICE.collect(), std::env::var_os("IRS_DIFF_SCENARIO").is_none()),
    }
}

/// What one program gave.
struct Outcome {
    seed: u64,
    line: String,
    features: program_gen::Features,
    estimate: u64,
    traces: usize,
    interleavings: usize,
    bug_kinds: Vec<String>,
    failures: Vec<String>,
}

fn json_str(s: &str) -> String {
    serde_json::Value::String(s.to_string()).to_string()
}

/// Generate, build and check the program of `seed` (or, with `IRS_DIFF_SOURCE`, that file).
fn check_seed(seed: u64, dir: &Path, keep: Option<&Path>) -> Outcome {
    let start = Instant::now();
    let opts = program_gen::GenOptions { scenario: std::env::var("IRS_DIFF_SCENARIO").ok().filter(|v| !v.is_empty()), ..Default::default() };
    let mut g = program_gen::generate_with(seed, &opts);
    if let Ok(file) = std::env::var("IRS_DIFF_SOURCE") {
        g.source = std::fs::read_to_string(&file).unwrap_or_else(|e| panic!("IRS_DIFF_SOURCE={file}: {e}"));
        g.features = Default::default();
        g.estimate = u64::MAX;
    }
    let name = format!("seed_{seed}");
    let src = dir.join(format!("{name}.c"));
    let exe = dir.join(&name);
    let work = dir.join(format!("{name}.work"));
    std::fs::write(&src, &g.source).unwrap();
    if let Some(k) = keep {
        std::fs::write(k.join(format!("{name}.c")), &g.source).unwrap();
    }
    let mut out = Outcome { seed, line: String::new(), features: g.features.clone(), estimate: g.estimate, traces: 0, interleavings: 0, bug_kinds: vec![], failures: vec![] };
    let mut json_modes = Vec::new();
    let mut oracle_seconds = 0.0;
    let keep_sources = |out: &mut Outcome| {
        if let Some(f) = out.failures.first_mut() {
            f.push_str(&format!("\n    (program: {}; work: {})", src.display(), work.display()));
        }
    };
    let fail = |out: &mut Outcome, what: String| {
        out.failures.push(format!("seed {seed}: {what}"));
    };
    'check: {
        if let Err(e) = irs_cc(dir, &["-O1", "-pthread", "-o", exe.to_str().unwrap(), src.to_str().unwrap()]) {
            fail(&mut out, format!("does not build: {e}"));
            break 'check;
        }
        let mut ex = match Executor::start(&exe, &[], Options::default()) {
            Ok(ex) => ex,
            Err(e) => {
                fail(&mut out, format!("the executor does not start: {e}"));
                break 'check;
            }
        };
        let truth = match oracle::explore_all(&mut ex, MAX_INTERLEAVINGS) {
            Ok(t) => t,
            Err(e) => {
                fail(&mut out, format!("[oracle] {e}"));
                break 'check;
            }
        };
        oracle_seconds = truth.seconds;
        out.traces = truth.traces.len();
        out.interleavings = truth.interleavings;
        out.bug_kinds = truth.bugs.keys().map(|b| b.kind.clone()).collect();
        for inc in &truth.inconsistent {
            fail(&mut out, format!("[oracle] {inc}"));
        }
        let _ = std::fs::create_dir_all(&work);
        for (mode, args) in MODES {
            let mwork = work.join(mode);
            match run_verify(&exe, args, &mwork) {
                Err(e) => {
                    fail(&mut out, format!("[{mode}] irs verify failed: {e}"));
                    json_modes.push(format!("{}:{{\"ok\":false,\"error\":true}}", json_str(mode)));
                }
                Ok(rep) => {
                    let (f, found) = check_report(&name, mode, &rep, &mut ex, &truth);
                    json_modes.push(format!(
                        "{}:{{\"ok\":{},\"traces\":{},\"ssb\":{},\"found\":{found},\"verdict\":{},\"violations\":{},\"seconds\":{:.3}}}",
                        json_str(mode),
                        f.is_empty(),
                        rep.traces,
                        rep.ssb,
                        json_str(&rep.verdict),
                        rep.violations.len(),
                        rep.seconds
                    ));
                    out.failures.extend(f);
                }
            }
        }
    }
    let ok = out.failures.is_empty();
    out.line = format!(
        "seed {seed:>6}  {:>5} interleavings (model {:>5}) {:>4} traces  bugs [{}]  {:.1}s  {}  | {}",
        out.interleavings,
        if g.estimate == u64::MAX { "-".to_string() } else { g.estimate.to_string() },
        out.traces,
        out.bug_kinds.join(","),
        start.elapsed().as_secs_f64(),
        if ok { "ok" } else { "DISAGREEMENT" },
        g.features.line()
    );
    if let Some(k) = keep {
        let line = format!(
            "{{\"seed\":{seed},\"features\":[{}],\"threads\":{},\"estimate\":{},\"interleavings\":{},\"traces\":{},\"bugs\":[{}],\"oracle_seconds\":{oracle_seconds:.3},\"seconds\":{:.3},\"ok\":{ok},\"modes\":{{{}}},\"failures\":[{}]}}\n",
            g.features.names.iter().map(|f| json_str(f)).collect::<Vec<_>>().join(","),
            g.features.threads,
            g.estimate,
            out.interleavings,
            out.traces,
            out.bug_kinds.iter().map(|b| json_str(b)).collect::<Vec<_>>().join(","),
            start.elapsed().as_secs_f64(),
            json_modes.join(","),
            out.failures.iter().map(|f| json_str(f)).collect::<Vec<_>>().join(",")
        );
        let mut f = std::fs::OpenOptions::new().create(true).append(true).open(k.join("results.jsonl")).unwrap();
        f.write_all(line.as_bytes()).unwrap();
    }
    if ok {
        let _ = std::fs::remove_dir_all(&work);
        let _ = std::fs::remove_file(&exe);
        let _ = std::fs::remove_file(&src);
    } else {
        keep_sources(&mut out);
    }
    out
}

#[test]
fn irs_verify_agrees_with_the_oracle_on_generated_programs() {
    let dir = scratch("differential");
    let (seeds, is_slice) = seeds();
    let keep: Option<PathBuf> = std::env::var("IRS_DIFF_KEEP").ok().filter(|v| !v.is_empty()).map(PathBuf::from);
    if let Some(k) = &keep {
        std::fs::create_dir_all(k).unwrap();
        let _ = std::fs::remove_file(k.join("results.jsonl"));
    }
    let jobs: usize = std::env::var("IRS_DIFF_JOBS").ok().and_then(|v| v.parse().ok()).unwrap_or(2).max(1);
    let start = Instant::now();
    let next = AtomicUsize::new(0);
    let results = Mutex::new(BTreeMap::<u64, Outcome>::new());
    std::thread::scope(|s| {
        for _ in 0..jobs {
            s.spawn(|| loop {
                let i = next.fetch_add(1, Ordering::SeqCst);
                let Some(&seed) = seeds.get(i) else { break };
                let o = check_seed(seed, &dir, keep.as_deref());
                println!("{}", o.line);
                for f in &o.failures {
                    println!("    {f}");
                }
                results.lock().unwrap().insert(seed, o);
            });
        }
    });
    let results = results.into_inner().unwrap();
    let seconds = start.elapsed().as_secs_f64();

    // Totals and the features histogram.
    let tried = results.len();
    let traces: usize = results.values().map(|o| o.traces).sum();
    let interleavings: usize = results.values().map(|o| o.interleavings).sum();
    let disagreements: Vec<&Outcome> = results.values().filter(|o| !o.failures.is_empty()).collect();
    let buggy = results.values().filter(|o| !o.bug_kinds.is_empty()).count();
    let deadlock = results.values().filter(|o| o.bug_kinds.iter().any(|b| b == "deadlock")).count();
    let safe = results.values().filter(|o| o.traces > 0 && o.bug_kinds.is_empty()).count();
    let mut hist: BTreeMap<&str, usize> = BTreeMap::new();
    for o in results.values() {
        for f in &o.features.names {
            *hist.entry(f).or_default() += 1;
        }
    }
    let mut by_threads: BTreeMap<usize, usize> = BTreeMap::new();
    for o in results.values() {
        *by_threads.entry(o.features.threads).or_default() += 1;
    }
    println!("\n==== differential: {tried} programs, {seconds:.0} s ====");
    println!("features: {}", program_gen::ALL_FEATURES.iter().map(|f| format!("{f}={}", hist.get(f).copied().unwrap_or(0))).collect::<Vec<_>>().join(" "));
    println!("threads: {}", by_threads.iter().map(|(t, n)| format!("{t}:{n}")).collect::<Vec<_>>().join(" "));
    println!("verdicts (oracle): {buggy} with bugs ({deadlock} with a deadlock), {safe} safe");
    println!("oracle: {interleavings} interleavings, {traces} traces");
    let above: Vec<String> = results.values().filter(|o| o.interleavings as u64 > o.estimate).map(|o| o.seed.to_string()).collect();
    if !above.is_empty() {
        println!("note: {} program(s) have more interleavings than the generator's model says (seeds {})", above.len(), above.join(", "));
    }
    println!(
        "TOTAL programs tried: {tried}  traces: {traces}  disagreements: {}{}",
        disagreements.len(),
        if disagreements.is_empty() { String::new() } else { format!(" (seeds {})", disagreements.iter().map(|o| o.seed.to_string()).collect::<Vec<_>>().join(", ")) }
    );

    // Each disagreement's first failures (all of them are printed above, with the program's line),
    // then whatever else is wrong with the slice.
    let mut shown: Vec<String> = Vec::new();
    for o in &disagreements {
        shown.extend(o.failures.iter().take(3).cloned());
        if o.failures.len() > 3 {
            shown.push(format!("seed {}: {} more failure(s), printed above", o.seed, o.failures.len() - 3));
        }
    }
    let mut other: Vec<String> = Vec::new();
    if is_slice {
        for (f, min) in MIN_FEATURES {
            let n = hist.get(f).copied().unwrap_or(0);
            if n < *min {
                other.push(format!("the slice has {n} programs with `{f}`, expected at least {min}: the generator changed"));
            }
        }
        if buggy < MIN_BUGGY || safe < MIN_SAFE || deadlock < MIN_DEADLOCK {
            other.push(format!("the slice has {buggy} programs with bugs ({deadlock} with a deadlock) and {safe} safe ones, expected at least {MIN_BUGGY}, {MIN_DEADLOCK} and {MIN_SAFE}"));
        }
        let three: usize = by_threads.iter().filter(|(&t, _)| t >= 3).map(|(_, n)| n).sum();
        if three < MIN_THREE_THREADS {
            other.push(format!("the slice has {three} programs with 3 threads or more, expected at least {MIN_THREE_THREADS}"));
        }
    }
    assert!(
        disagreements.is_empty() && other.is_empty(),
        "{} program(s) on which irs verify disagrees with the oracle (seeds {}); {} other problem(s):\n{}",
        disagreements.len(),
        disagreements.iter().map(|o| o.seed.to_string()).collect::<Vec<_>>().join(", "),
        other.len(),
        other.iter().chain(&shown).cloned().collect::<Vec<_>>().join("\n\n")
    );
}

/// The generator is a function of the seed, and its programs stay within the oracle's reach.
#[test]
fn the_generator_is_deterministic_and_small() {
    for seed in [0u64, 1, 17, 123_456, u64::MAX] {
        let a = program_gen::generate(seed);
        let b = program_gen::generate(seed);
        assert_eq!(a.source, b.source, "seed {seed}");
        assert!(a.source.contains(&format!("seed {seed} ")), "the source names its seed");
        assert!(a.estimate <= program_gen::MAX_ESTIMATE);
    }
    assert_ne!(program_gen::generate(1).source, program_gen::generate(2).source);
}
