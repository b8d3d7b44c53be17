//! The end-to-end corpus (DESIGN §2, §5): every `tests/programs/NAME.c` is built plainly and with
//! `irs cc`, both run side by side with the same arguments and stdin, and a recorded run is
//! checked against `NAME.expect` (format in tests/programs/README.md).

mod common;

use common::*;
use std::collections::BTreeMap;
use std::path::Path;
use std::process::Command;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;

#[derive(Debug, Default)]
struct Expect {
    args: Vec<String>,
    stdin: Option<String>,
    exit: String,
    outcome: String,
    skipped: Vec<String>,
    instrumented: Vec<String>,
    threads: BTreeMap<usize, Vec<String>>,
    counts: BTreeMap<usize, usize>,
}

fn parse_expect(text: &str) -> Result<Expect, String> {
    let mut e = Expect::default();
    let mut current: Option<usize> = None;
    for (n, raw) in text.lines().enumerate() {
        let line = raw.split(" #").next().unwrap_or("");
        if line.trim().is_empty() || line.trim_start().starts_with('#') {
            continue;
        }
        if line.starts_with(' ') || line.starts_with('\t') {
            let t = current.ok_or(format!("line {}: event outside a thread block", n + 1))?;
            e.threads.get_mut(&t).unwrap().push(line.split_whitespace().collect::<Vec<_>>().join(" "));
            continue;
        }
        current = None;
        let (key, value) = line.split_once(':').ok_or(format!("line {}: expected `key: value`", n + 1))?;
        let value = value.trim();
        if let Some(t) = key.strip_prefix("thread ") {
            let t: usize = t.trim().parse().map_err(|_| format!("line {}: bad thread number", n + 1))?;
            e.threads.insert(t, Vec::new());
            current = Some(t);
            continue;
        }
        if let Some(t) = key.strip_prefix("count ") {
            let t: usize = t.trim().parse().map_err(|_| format!("line {}: bad thread number", n + 1))?;
            e.counts.insert(t, value.parse().map_err(|_| format!("line {}: bad count", n + 1))?);
            continue;
        }
        match key {
            "args" => e.args = value.split_whitespace().map(String::from).collect(),
            "stdin" => e.stdin = Some(format!("{}\n", value.replace("\\n", "\n"))),
            // `exit: 3` or `exit: signal 6`
            "exit" => e.exit = if value.parse::<i32>().is_ok() { format!("exit {value}") } else { value.to_string() },
            "outcome" => e.outcome = value.to_string(),
            "skipped" => e.skipped.push(value.to_string()),
            "instrumented" => e.instrumented.push(value.to_string()),
            other => return Err(format!("line {}: unknown key `{other}`", n + 1)),
        }
    }
    if e.exit.is_empty() || e.outcome.is_empty() {
        return Err("`exit:` and `outcome:` are required".into());
    }
    Ok(e)
}

/// `irs trace show --by-thread` output, parsed back: outcome and per-thread event lines.
fn parse_by_thread(text: &str) -> (String, BTreeMap<usize, Vec<String>>) {
    let mut outcome = String::new();
    let mut threads = BTreeMap::new();
    let mut current = None;
    for line in text.lines() {
        if let Some(o) = line.strip_prefix("outcome: ") {
            outcome = o.to_string();
        } else if let Some(t) = line.strip_prefix("thread ").and_then(|t| t.strip_suffix(':')) {
            let t: usize = t.parse().unwrap();
            threads.insert(t, Vec::new());
            current = Some(t);
        } else if let Some(t) = current {
            threads.get_mut(&t).map(|v: &mut Vec<String>| v.push(line.trim().to_string()));
        }
    }
    (outcome, threads)
}

fn outcome_matches(expected: &str, actual: &str) -> bool {
    if expected.starts_with("violation") {
        actual.split(':').next() == Some(expected.split(':').next().unwrap())
    } else {
        expected == actual
    }
}

fn check_program(src: &Path, dir: &Path) -> Result<(), String> {
    let name = src.file_stem().unwrap().to_string_lossy().into_owned();
    let expect_path = src.with_extension("expect");
    let text = std::fs::read_to_string(&expect_path).map_err(|e| format!("{}: {e}", expect_path.display()))?;
    let e = parse_expect(&text).map_err(|m| format!("{}: {m}", expect_path.display()))?;
    let src_s = src.display().to_string();
    plain_cc(dir, &["-O2", "-pthread", "-w", "-o", "plain", &src_s])?;
    irs_cc(dir, &["-O2", "-pthread", "-w", "-o", "inst", &src_s, "--site-report", "sites.txt"])?;
    irs_cc(dir, &["-O0", "-pthread", "-w", "-o", "inst0", &src_s])?;

    let stdin = e.stdin.as_deref();
    let plain = run(Command::new(dir.join("plain")).args(&e.args), stdin, T)?;
    for variant in ["inst", "inst0"] {
        let inst = run(Command::new(dir.join(variant)).args(&e.args), stdin, T)?;
        if inst.stdout != plain.stdout || inst.how() != plain.how() {
            return Err(format!(
                "{name}: {variant} differs from the plain build: plain {} {:?}, instrumented {} {:?}",
                plain.how(),
                plain.stdout,
                inst.how(),
                inst.stdout
            ));
        }
    }
    if plain.how() != e.exit {
        return Err(format!("{name}: plain build ended with {}, .expect says {}", plain.how(), e.exit));
    }

    let trace = dir.join("run.trace");
    let rec = run(
        Command::new(irs()).args(["record", "--out"]).arg(&trace).arg("--").arg(dir.join("inst")).args(&e.args),
        stdin,
        T,
    )?;
    if rec.stdout != plain.stdout {
        return Err(format!("{name}: recorded run printed {:?}, plain {:?}", rec.stdout, plain.stdout));
    }
    let expected_code = match e.exit.split_once(' ') {
        Some(("exit", c)) => c.parse::<i32>().unwrap(),
        Some(("signal", s)) => 128 + s.parse::<i32>().unwrap(),
        _ => return Err(format!("{name}: bad exit line {}", e.exit)),
    };
    if rec.status.code() != Some(expected_code) {
        return Err(format!("{name}: irs record exited with {} (expected {expected_code}); stderr: {}", rec.how(), rec.stderr));
    }
    let t = shared_proto::Trace::read(&trace).map_err(|err| format!("{name}: {err}"))?;
    let (outcome, threads) = parse_by_thread(&irs::trace_view::by_thread(&t));
    if !outcome_matches(&e.outcome, &outcome) {
        return Err(format!("{name}: outcome {outcome:?}, expected {:?}", e.outcome));
    }
    let expected_threads = e.threads.len() + e.counts.len();
    if threads.len() != expected_threads {
        return Err(format!("{name}: {} threads in the trace, .expect describes {expected_threads}", threads.len()));
    }
    for (tid, events) in &threads {
        if let Some(exp) = e.threads.get(tid) {
            if exp != events {
                return Err(format!("{name}: thread {tid} events differ\n  expected: {exp:?}\n  actual:   {events:?}"));
            }
        } else if let Some(&c) = e.counts.get(tid) {
            if events.len() != c {
                return Err(format!("{name}: thread {tid} has {} events, expected {c}: {events:?}", events.len()));
            }
        } else {
            return Err(format!("{name}: thread {tid} is not described in .expect"));
        }
    }
    let counts = t.per_thread_counts();
    for (tid, events) in &threads {
        if counts[*tid] as usize != events.len() {
            return Err(format!("{name}: per-thread count of T{tid} disagrees with its events"));
        }
    }

    let report = std::fs::read_to_string(dir.join("sites.txt")).map_err(|err| err.to_string())?;
    let has = |verdict: &str, what: &str| {
        report.lines().any(|l| {
            l.contains(verdict) && l.split_whitespace().collect::<Vec<_>>().windows(2).any(|w| w[1] == what && matches!(w[0], "local" | "global"))
        })
    };
    for s in &e.skipped {
        if !has("skipped", s) {
            return Err(format!("{name}: site report does not list `{s}` as skipped:\n{report}"));
        }
    }
    for s in &e.instrumented {
        if !has("instrumented", s) {
            return Err(format!("{name}: site report does not list `{s}` as instrumented:\n{report}"));
        }
    }
    Ok(())
}


#[test]
fn corpus_programs_behave_like_plain_builds_and_record_expected_events() {
    let progs = corpus_programs();
    assert!(progs.len() >= 15, "the corpus must have at least 15 programs, has {}", progs.len());
    let next = AtomicUsize::new(0);
    let failures = Mutex::new(Vec::new());
    let workers = std::thread::available_parallelism().map(|n| n.get()).unwrap_or(2).max(2);
    std::thread::scope(|s| {
        for _ in 0..workers {
            s.spawn(|| loop {
                let i = next.fetch_add(1, Ordering::Relaxed);
                let Some(src) = progs.get(i) else { break };
                let name = src.file_stem().unwrap().to_string_lossy().into_owned();
                let dir = scratch(&format!("corpus/{name}"));
                if let Err(e) = check_program(src, &dir) {
                    failures.lock().unwrap().push(e);
                }
            });
        }
    });
    let failures = failures.into_inner().unwrap();
    assert!(failures.is_empty(), "{} of {} corpus programs failed:\n{}", failures.len(), progs.len(), failures.join("\n\n"));
    eprintln!("corpus: {} programs passed", progs.len());
}

#[test]
fn expect_parser_reads_the_documented_format() {
    let e = parse_expect("args: a b\nstdin: x\nexit: 0\noutcome: exit 0\nskipped: buf\nthread 0:\n  store g\n  exit T0\ncount 1: 3\n").unwrap();
    assert_eq!(e.args, ["a", "b"]);
    assert_eq!(e.stdin.as_deref(), Some("x\n"));
    assert_eq!(e.threads[&0], ["store g", "exit T0"]);
    assert_eq!(e.counts[&1], 3);
    assert!(parse_expect("thread 0:\n").is_err());
}
