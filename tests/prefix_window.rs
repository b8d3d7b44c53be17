//! Past the cut (DESIGN §4's prefix barrier as docs/src/enforce.md restates it): an event of
//! a thread past its cut waits only for the pending prefix events it depends on, while another
//! thread's part of the prefix is still running. Real programs, real prefixes, real threads: a
//! thread whose part of the prefix is a write after a long sleep, and a thread outside the
//! prefix that touches another word (it must not wait) or the same one (it must wait, and see
//! the write). Every run is recorded alongside and must keep the prefix's histories.

mod common;
#[path = "common/program_gen.rs"]
#[allow(dead_code)]
mod program_gen;

use common::*;
use shared_proto::prefix_segment::PrefixView;
use std::path::Path;
use std::process::Command;

/// T1 sleeps, then writes `x` (its part of the prefix); T2, outside the prefix, writes `y` (or,
/// with `-DREAD_X`, reads `x`) and notes when it did, in ms since `main` started.
const SLEEPER: &str = r#"
#include <pthread.h>
#include <stdio.h>
#include <time.h>
#include <unistd.h>
int x, y, seen_x = -1;
long t2_ms;
struct timespec start;
static long ms_since(const struct timespec *s) {
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    return (now.tv_sec - s->tv_sec) * 1000 + (now.tv_nsec - s->tv_nsec) / 1000000;
}
static void *t1(void *a) { usleep(1000000); x = 1; return a; }
static void *t2(void *a) {
#ifdef READ_X
    seen_x = x;
#else
    y = 1;
#endif
    t2_ms = ms_since(&start);
    return a;
}
int main(void) {
    pthread_t a, b;
    clock_gettime(CLOCK_MONOTONIC, &start);
    pthread_create(&a, 0, t1, 0);
    pthread_create(&b, 0, t2, 0);
    pthread_join(a, 0);
    pthread_join(b, 0);
    printf("t2_ms=%ld seen_x=%d\n", t2_ms, seen_x);
    return 0;
}
"#;

fn irs_in(dir: &Path, args: &[&str]) -> Output {
    run(Command::new(irs()).args(args).current_dir(dir), None, T).unwrap()
}

fn field(out: &str, name: &str) -> i64 {
    out.split_whitespace().find_map(|w| w.strip_prefix(name)).and_then(|v| v.parse().ok()).unwrap_or_else(|| panic!("no {name} in {out:?}"))
}

/// The prefix holds `main`'s two creations and T1's write of `x`, nothing of T2: T2 runs past its
/// cut (0) from its first event while T1 sleeps inside its part of the prefix.
fn runs(variant: &str, defines: &[&str]) -> Vec<(i64, i64)> {
    let d = scratch(&format!("prefix_window/{variant}"));
    std::fs::write(d.join("sleeper.c"), SLEEPER).unwrap();
    let mut args = vec!["-O1", "-pthread", "-o", "sleeper", "sleeper.c"];
    args.extend(defines);
    irs_cc(&d, &args).unwrap();
    // T1's write comes before T2's events in the trace: main creates both, then T1 runs.
    std::fs::write(d.join("t1_first"), "0,0,1,1").unwrap();
    let replay = irs_in(&d, &["replay", "--schedule", "t1_first", "--trace-out", "first.trace", "--", "./sleeper"]);
    assert!(replay.status.success(), "{}", replay.stderr);
    let c = irs_in(&d, &["constrain", "--trace", "first.trace", "--out", "w.prefix", "--cut", "2,1,0"]);
    assert!(c.status.success(), "{}{}", c.stdout, c.stderr);
    let bytes = std::fs::read(d.join("w.prefix")).unwrap();
    let view = PrefixView::parse(&bytes, None).unwrap();
    assert!(view.object_index().is_some(), "the prefix's object index names every event");
    let cut = view.cutoff(0);
    let trace_path = d.join("run.trace");
    (0..4)
        .map(|i| {
            let mut cmd = Command::new(d.join("sleeper"));
            cmd.env("IRS_PREFIX", d.join("w.prefix")).env("IRS_TRACE", &trace_path);
            if i % 2 == 1 {
                cmd.env("IRS_CHAOS", "1");
            }
            let o = run(&mut cmd, None, T).unwrap();
            assert!(o.status.success(), "{variant}, run {i}: {}", o.stderr);
            let t = shared_proto::Trace::read(&trace_path).unwrap();
            if let Err(e) = shared_proto::prefix_check::check_histories(&t, &view, &cut, Default::default()) {
                panic!("{variant}, run {i}: {e}\n{}", irs::trace_view::table(&t));
            }
            (field(&o.stdout, "t2_ms="), field(&o.stdout, "seen_x="))
        })
        .collect()
}

/// T2 writes a word no prefix event touches: it runs at once, long before T1's 1 s sleep ends
/// (the barrier made it wait the whole sleep; the margin is for a loaded machine).
#[test]
fn an_event_past_the_cut_on_another_object_does_not_wait() {
    for (t2_ms, _) in runs("other_word", &[]) {
        assert!(t2_ms < 500, "T2 waited {t2_ms} ms for T1's part of the prefix (1 s of sleep) although it touches another word");
    }
}

/// T2 reads the word T1's part of the prefix writes: it waits for the write and sees it, in every
/// run (as the verified trace has it).
#[test]
fn an_event_past_the_cut_on_an_object_of_a_pending_prefix_event_waits_for_it() {
    for (t2_ms, seen_x) in runs("same_word", &["-DREAD_X"]) {
        assert_eq!(seen_x, 1, "T2 read x before T1's write, which the prefix orders before it");
        assert!(t2_ms >= 990, "T2 read x after {t2_ms} ms, before T1's sleep ended");
    }
}

/// Every relaxation step (each distinct cutoff from all constraints down to none, as `irs bench
/// overhead` and the verifier's publishing step through them) of the IRS paper's 16-thread
/// programs and of 4 threads incrementing a counter under a mutex, under chaos: every run ends as the plain build's and
/// keeps the prefix's histories.
#[test]
fn every_relaxation_step_keeps_the_verified_histories_under_chaos() {
    let programs: [(&str, &str, &[&str]); 3] = [
        ("indexer", "benchmarks/irs_paper/indexer.c", &["-DNTHREADS=15"]),
        ("last_zero", "benchmarks/irs_paper/last_zero.c", &[]),
        ("counter", "counter.c", &[]),
    ];
    std::thread::scope(|s| {
        for (name, src, defines) in programs {
            s.spawn(move || relaxation_steps(name, src, defines));
        }
    });
}

fn relaxation_steps(name: &str, src: &str, defines: &[&str]) {
    let d = scratch(&format!("prefix_window/steps_{name}"));
    // The mutex counter is written here; the others are the repository's.
    std::fs::write(d.join("counter.c"), mutex_counter_source(4, 3)).unwrap();
    let src = if src == "counter.c" { d.join(src) } else { repo().join(src) };
    let mut args = vec!["-O2", "-pthread", "-w", "-o", name, src.to_str().unwrap()];
    args.extend(defines);
    irs_cc(&d, &args).unwrap();
    let exe = format!("./{name}");
    let replay = irs_in(&d, &["replay", "--schedule-default", "--trace-out", "first.trace", "--", &exe]);
    assert!(replay.status.success(), "{name}: {}", replay.stderr);
    let trace = shared_proto::Trace::read(&d.join("first.trace")).unwrap();
    let table = shared_proto::requirement_table::RequirementTable::from_trace(&trace, Default::default());
    let total = table.constraints_within(&table.full_cut());
    let mut cuts: Vec<Vec<u32>> = (0..=total).map(|n| table.cut_keeping(n)).collect();
    cuts.dedup();
    assert!(cuts.len() > 5, "{name}: {} relaxation steps", cuts.len());
    let trace_path = d.join("run.trace");
    for cut in &cuts {
        let text = cut.iter().map(|c| c.to_string()).collect::<Vec<_>>().join(",");
        let c = irs_in(&d, &["constrain", "--trace", "first.trace", "--out", "step.prefix", "--cut", &text]);
        assert!(c.status.success(), "{name} {text}: {}", c.stderr);
        let bytes = std::fs::read(d.join("step.prefix")).unwrap();
        let view = PrefixView::parse(&bytes, None).unwrap();
        for i in 0..5 {
            let o = run(Command::new(d.join(name)).env("IRS_PREFIX", d.join("step.prefix")).env("IRS_CHAOS", "1").env("IRS_TRACE", &trace_path), None, T).unwrap();
            assert!(o.status.success(), "{name} under {text}, run {i}: {} {}", o.how(), o.stderr);
            assert!(!o.stderr.contains("irs-runtime"), "{name} under {text}, run {i}: {}", o.stderr);
            let t = shared_proto::Trace::read(&trace_path).unwrap();
            if let Err(e) = shared_proto::prefix_check::check_histories(&t, &view, cut, Default::default()) {
                panic!("{name} under {text}, run {i}: {e}\n{}", irs::trace_view::table(&t));
            }
        }
    }
}

/// Programs nobody designed for this (the differential campaign's generator: shared words,
/// mutexes, and each synchronisation scenario) that `irs verify` finds safe, at up to 8
/// relaxation steps of their default first trace, 3 chaos runs each: every run ends (as some
/// execution of the program does), with no report from irs, and keeps the prefix's histories. Seeds from
/// `IRS_WINDOW_SEEDS=A..B` (default 200000..200024; programs with a bug are skipped, and at
/// least a third must be checked).
#[test]
fn generated_programs_keep_the_verified_histories_at_every_step() {
    let (a, b) = std::env::var("IRS_WINDOW_SEEDS")
        .ok()
        .and_then(|v| v.split_once("..").and_then(|(a, b)| Some((a.parse::<u64>().ok()?, b.parse::<u64>().ok()?))))
        .unwrap_or((200_000, 200_024));
    let scenarios = [None, Some("cond"), Some("sem"), Some("barrier"), Some("rwlock"), Some("once"), Some("recursive"), Some("spin"), Some("atomics")];
    let seeds: Vec<u64> = (a..b).collect();
    let next = std::sync::atomic::AtomicUsize::new(0);
    let checked = std::sync::atomic::AtomicUsize::new(0);
    let failures = std::sync::Mutex::new(Vec::new());
    std::thread::scope(|s| {
        for _ in 0..2 {
            s.spawn(|| loop {
                let i = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                let Some(&seed) = seeds.get(i) else { break };
                let scenario = scenarios[(seed % scenarios.len() as u64) as usize];
                match generated_steps(seed, scenario) {
                    Ok(true) => {
                        checked.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                    }
                    Ok(false) => {}
                    Err(e) => failures.lock().unwrap().push(e),
                }
            });
        }
    });
    let f = failures.into_inner().unwrap();
    assert!(f.is_empty(), "{}", f.join("\n"));
    let checked = checked.into_inner();
    assert!(checked * 3 >= seeds.len(), "only {checked} of {} programs are safe", seeds.len());
}

/// `Ok(false)`: the program has a bug (no prefix is published for it).
fn generated_steps(seed: u64, scenario: Option<&str>) -> Result<bool, String> {
    let d = scratch(&format!("prefix_window/gen_{seed}"));
    let opts = program_gen::GenOptions { scenario: scenario.map(str::to_string), ..Default::default() };
    let g = program_gen::generate_with(seed, &opts);
    std::fs::write(d.join("p.c"), &g.source).unwrap();
    irs_cc(&d, &["-O1", "-pthread", "-o", "p", "p.c"])?;
    let replay = irs_in(&d, &["replay", "--schedule-default", "--trace-out", "first.trace", "--", "./p"]);
    let Ok(trace) = shared_proto::Trace::read(&d.join("first.trace")) else {
        return Err(format!("seed {seed}: no first trace: {}", replay.stderr));
    };
    // Only programs verified safe: a prefix is published for nothing else, and under a prefix of
    // a program with a deadlock or an assertion a run may meet it past the cut.
    let v = irs_in(&d, &["verify", "--json", "--time-limit", "30", "--", "./p"]);
    if !matches!(trace.outcome, shared_proto::Outcome::Exit(_)) || !v.stdout.lines().last().is_some_and(|l| l.contains("\"verdict\":\"safe\"")) {
        return Ok(false);
    }
    let table = shared_proto::requirement_table::RequirementTable::from_trace(&trace, Default::default());
    let total = table.constraints_within(&table.full_cut());
    let mut cuts: Vec<Vec<u32>> = (0..=total).map(|n| table.cut_keeping(n)).collect();
    cuts.dedup();
    let picked: Vec<&Vec<u32>> = if cuts.len() <= 8 { cuts.iter().collect() } else { (0..8).map(|i| &cuts[i * (cuts.len() - 1) / 7]).collect() };
    let trace_path = d.join("run.trace");
    for cut in picked {
        let text = cut.iter().map(|c| c.to_string()).collect::<Vec<_>>().join(",");
        let c = irs_in(&d, &["constrain", "--trace", "first.trace", "--out", "step.prefix", "--cut", &text]);
        if !c.status.success() {
            return Err(format!("seed {seed} ({scenario:?}) {text}: constrain: {}", c.stderr));
        }
        let bytes = std::fs::read(d.join("step.prefix")).unwrap();
        let view = PrefixView::parse(&bytes, None).map_err(|e| e.to_string())?;
        for i in 0..3 {
            let _ = std::fs::remove_file(&trace_path);
            let o = run(Command::new(d.join("p")).env("IRS_PREFIX", d.join("step.prefix")).env("IRS_CHAOS", "1").env("IRS_TRACE", &trace_path), None, T)?;
            // Any end a run of the program can have (a generated program may `_exit(4)` in some
            // executions: no violation), but no report of irs's and no hang (`run`'s limit).
            if o.stderr.contains("irs-runtime") || o.stderr.contains("panicked") {
                return Err(format!("seed {seed} ({scenario:?}) under {text}, run {i}: {}", o.stderr.trim()));
            }
            let t = shared_proto::Trace::read(&trace_path).map_err(|e| format!("seed {seed} under {text}, run {i} ({}): {e}", o.how()))?;
            if let Err(e) = shared_proto::prefix_check::check_histories(&t, &view, cut, Default::default()) {
                return Err(format!("seed {seed} ({scenario:?}) under {text}, run {i}: {e}\n(program: {})", d.join("p.c").display()));
            }
        }
    }
    Ok(true)
}
