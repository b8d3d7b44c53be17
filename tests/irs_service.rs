//! IRS end to end (DESIGN §1; IRS paper §4): `irs run` starts the background verifier of the run's
//! input, waits for its first prefix and runs the program under the prefixes it publishes; `irs
//! status` reports it; a verifier killed with -9 leaves its last prefix in force, is reported
//! stale, and its successor reuses the published table and never publishes a larger prefix.

mod common;

use common::*;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

fn build(dir: &Path, name: &str, src: &Path, defines: &[&str]) -> PathBuf {
    let mut args: Vec<String> = vec!["-O1".into()];
    args.extend(defines.iter().map(|d| d.to_string()));
    args.extend(["-o".into(), name.into(), src.display().to_string()]);
    let args: Vec<&str> = args.iter().map(|s| s.as_str()).collect();
    irs_cc(dir, &args).unwrap();
    dir.join(name)
}

fn status(prog: &Path) -> serde_json::Value {
    let o = run(Command::new(irs()).args(["status", "--json"]).arg(prog), None, T).unwrap();
    serde_json::from_str(o.stdout.trim()).unwrap_or_else(|e| panic!("status --json ({e}): {}{}", o.stdout, o.stderr))
}

/// Forgets the program's verifications (stops its verifiers, removes every input's prefix,
/// state, log and bug schedules) when dropped.
struct Cleanup(PathBuf);

impl Drop for Cleanup {
    fn drop(&mut self) {
        let _ = run(Command::new(irs()).arg("forget").arg(&self.0), None, T);
    }
}

/// `irs run ARGS -- PROG`, its verifier anchored on the default schedule unless `args` say
/// otherwise (these tests count on its prefixes; the automatic anchor is `irs_inputs`' default).
fn irs_run(prog: &Path, args: &[&str]) -> Output {
    let anchor: &[&str] = if args.contains(&"--anchor") { &[] } else { &["--anchor", "default"] };
    run(Command::new(irs()).arg("run").args(anchor).args(args).arg("--").arg(prog), None, Duration::from_secs(300)).unwrap()
}

fn wait_until(what: &str, limit: Duration, mut f: impl FnMut() -> bool) {
    let t = Instant::now();
    while !f() {
        assert!(t.elapsed() < limit, "timed out waiting until {what}");
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// The cutoff log of a segment as `irs prefix show` prints it.
fn cutoff_log(segment: &str) -> Vec<Vec<u64>> {
    let o = run(Command::new(irs()).args(["prefix", "show", segment]), None, T).unwrap();
    let line = o.stdout.lines().find(|l| l.starts_with("# cutoff log:")).map(|l| l.to_string());
    match line {
        None => Vec::new(),
        Some(l) => l
            .trim_start_matches("# cutoff log:")
            .split(']')
            .filter_map(|c| c.trim().strip_prefix('['))
            .map(|c| c.split(',').map(|x| x.parse().unwrap()).collect())
            .collect(),
    }
}

/// Once the program's verifier has published twice, kill it with -9 (it must still be running)
/// and wait until it is reported stale.
fn kill_verifier_midway(prog: &Path) {
    wait_until("some relaxation", Duration::from_secs(60), || status(prog)["state"]["published"].as_u64().unwrap_or(0) >= 2);
    let s = status(prog);
    assert_eq!(s["status"], "running", "too fast to kill: {s}");
    // SAFETY: killing the verifier this test started.
    unsafe { libc::kill(s["state"]["pid"].as_u64().unwrap() as i32, libc::SIGKILL) };
    wait_until("the verifier is reported stale", Duration::from_secs(10), || status(prog)["status"] == "STALE");
}

#[test]
fn runs_under_a_live_verifier_never_hit_the_bug_it_finds() {
    let d = scratch("irs_service/race");
    std::fs::write(
        d.join("race.c"),
        "#include <assert.h>\n#include <pthread.h>\nint x;\nvoid *t(void *a) { int r = x; x = r + 1; return 0; }\nint main(void) { pthread_t a, b; pthread_create(&a, 0, t, 0); pthread_create(&b, 0, t, 0); pthread_join(a, 0); pthread_join(b, 0); assert(x == 2); return 0; }\n",
    )
    .unwrap();
    let prog = build(&d, "race", &d.join("race.c"), &[]);
    let _c = Cleanup(prog.clone());
    let o = irs_run(&prog, &["--repeat", "200", "--chaos"]);
    assert!(o.status.success(), "{}", o.stderr);
    assert!(o.stderr.contains("background verifier started"), "{}", o.stderr);
    assert_eq!(o.stderr.matches("exit 0 in").count(), 200, "{}", o.stderr);
    wait_until("the verifier finishes", Duration::from_secs(60), || status(&prog)["status"] == "finished");
    let s = status(&prog);
    assert_eq!(s["state"]["verdict"], "violation", "{s}");
    assert!(s["constraints_in_force"].as_u64().unwrap() > 0, "a buggy program keeps constraints: {s}");
    // A second `irs run` attaches to the finished verification instead of starting another.
    let o = irs_run(&prog, &["--repeat", "3"]);
    assert!(o.stderr.contains("verification finished (violation)"), "{}", o.stderr);
    let human = run(Command::new(irs()).arg("status").arg(&prog), None, T).unwrap();
    assert!(human.stdout.contains("found: violation assert"), "{}", human.stdout);
}

#[test]
fn a_killed_verifier_is_stale_and_its_successor_only_shrinks_the_prefix() {
    let d = scratch("irs_service/kill");
    // 46,080 traces: several seconds of verification, time enough to kill it mid-way (MPAT(5),
    // 3,840 traces, now verifies in half a second).
    let prog = build(&d, "mpat", &repo().join("benchmarks/qpor/mpat.c"), &["-DK=6"]);
    let _c = Cleanup(prog.clone());
    let o = irs_run(&prog, &["--repeat", "1"]);
    assert!(o.status.success(), "{}", o.stderr);
    kill_verifier_midway(&prog);
    let segment = status(&prog)["segment"].as_str().unwrap().to_string();
    let before = cutoff_log(&segment);
    let in_force = status(&prog)["constraints_in_force"].as_u64().unwrap();
    // Runs go on under the last prefix; the next `irs run` starts a new verifier.
    let o = irs_run(&prog, &["--repeat", "20", "--chaos"]);
    assert!(o.status.success(), "{}", o.stderr);
    // Queued again; verified by a new worker, or by the old one if it had not ended yet.
    assert!(o.stderr.contains("verifier STALE"), "{}", o.stderr);
    assert!(!o.stderr.contains("UNVERIFIED"), "{}", o.stderr);
    wait_until("the new verifier finishes", Duration::from_secs(120), || status(&prog)["status"] == "finished");
    let s = status(&prog);
    assert_eq!(s["state"]["verdict"], "safe", "{s}");
    assert_eq!(s["constraints_in_force"], 0, "a safe program ends unconstrained: {s}");
    let after = cutoff_log(&segment);
    assert!(after.len() > before.len() && after[..before.len()] == before[..], "the log was continued, not replaced");
    for w in after.windows(2) {
        assert!(w[1].iter().zip(&w[0]).all(|(a, b)| a <= b), "a larger prefix was published: {:?} then {:?}", w[0], w[1]);
    }
    assert!(in_force > 0);
}

/// Under `irs run --anchor natural` the worker's verifier anchors on a natural run and keeps its
/// schedule beside the segment: a verifier restarted after a `kill -9` (by a run that does not
/// ask for it) runs that schedule again, takes the segment over and only shrinks the prefix.
#[test]
fn a_verifier_anchored_on_a_natural_run_is_taken_over_after_a_kill() {
    let d = scratch("irs_service/kill-natural");
    let prog = build(&d, "mpat", &repo().join("benchmarks/qpor/mpat.c"), &["-DK=6"]);
    let _c = Cleanup(prog.clone());
    let o = irs_run(&prog, &["--anchor", "natural"]);
    assert!(o.status.success(), "{}", o.stderr);
    kill_verifier_midway(&prog);
    let segment = status(&prog)["segment"].as_str().unwrap().to_string();
    assert!(Path::new(&format!("{segment}.anchor")).exists(), "the natural run's schedule is kept beside {segment}");
    let before = cutoff_log(&segment);
    let o = irs_run(&prog, &["--repeat", "5"]);
    assert!(o.status.success(), "{}", o.stderr);
    wait_until("the new verifier finishes", Duration::from_secs(120), || status(&prog)["status"] == "finished");
    let s = status(&prog);
    assert_eq!(s["state"]["verdict"], "safe", "{s}");
    assert_eq!(s["constraints_in_force"], 0, "{s}");
    let after = cutoff_log(&segment);
    assert!(after.len() > before.len() && after[..before.len()] == before[..], "the log was continued, not replaced: {before:?} then {after:?}");
}

#[test]
fn status_of_a_program_without_verifier_is_an_error() {
    let d = scratch("irs_service/none");
    std::fs::write(d.join("p.c"), "int main(void) { return 0; }\n").unwrap();
    let prog = build(&d, "p", &d.join("p.c"), &[]);
    let o = run(Command::new(irs()).arg("status").arg(&prog), None, T).unwrap();
    assert_eq!(o.status.code(), Some(2), "{}", o.stdout);
    assert!(o.stderr.contains("no verifier has run"), "{}", o.stderr);
}

/// What a program's verification must end in.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Expect {
    /// Verified safe: the last published prefix is empty.
    Safe,
    /// A bug found: the prefix that excludes it stays (never empty).
    Bug,
}

struct StressProgram {
    name: &'static str,
    src: &'static str,
    defines: &'static [&'static str],
    time_limit: Option<&'static str>,
    expect: Expect,
}

/// The IRS paper's programs (small parameters where they have them) and the demo's bank.
const STRESS: [StressProgram; 9] = [
    StressProgram { name: "bank", src: "examples/bank.c", defines: &["-DTELLERS=5", "-DNET_US=20"], time_limit: None, expect: Expect::Bug },
    StressProgram { name: "last_zero", src: "benchmarks/irs_paper/last_zero.c", defines: &["-DN=12"], time_limit: None, expect: Expect::Safe },
    StressProgram { name: "fibonacci", src: "benchmarks/irs_paper/fibonacci.c", defines: &["-DROUNDS=4"], time_limit: None, expect: Expect::Safe },
    StressProgram { name: "indexer", src: "benchmarks/irs_paper/indexer.c", defines: &["-DNTHREADS=15"], time_limit: None, expect: Expect::Safe },
    // Busy-waiting, at its default four rounds: its spin-waits end (docs/src/spin-waits.md), so it is verified
    // to the end and relaxed.
    StressProgram { name: "dekker", src: "benchmarks/irs_paper/dekker.c", defines: &[], time_limit: None, expect: Expect::Safe },
    StressProgram { name: "peterson", src: "benchmarks/irs_paper/peterson.c", defines: &[], time_limit: None, expect: Expect::Safe },
    // Two rounds: its retry loop writes, and four rounds are beyond exhaustive exploration
    // (docs/src/spin-waits.md).
    StressProgram { name: "lamport", src: "benchmarks/irs_paper/lamport.c", defines: &["-DROUNDS=2"], time_limit: None, expect: Expect::Safe },
    StressProgram { name: "bigshot", src: "benchmarks/irs_paper/bigshot.c", defines: &[], time_limit: None, expect: Expect::Safe },
    StressProgram { name: "shared_pointer", src: "benchmarks/irs_paper/shared_pointer.c", defines: &[], time_limit: None, expect: Expect::Safe },
];

/// Runs of each program at least (more while its verifier is still publishing).
const STRESS_RUNS: usize = 120;

/// Resets the program's verification state when dropped (kills its verifier, removes its
/// segment, state, log and bug schedules).
struct Reset(shared_proto::ProgramId);

impl Drop for Reset {
    fn drop(&mut self) {
        irs::service::forget(self.0);
    }
}

/// The segment's prefix view (bytes kept alongside) and its cutoff log.
fn segment_log(id: shared_proto::ProgramId) -> Option<(Vec<u8>, Vec<Vec<u32>>)> {
    let bytes = std::fs::read(shared_proto::prefix_segment::segment_path(id)).ok()?;
    let v = shared_proto::prefix_segment::PrefixView::parse(&bytes, Some(id)).ok()?;
    let log = (0..v.published()).map(|i| v.cutoff(i)).collect();
    Some((bytes, log))
}

/// One run of `prog` under its installed segment, with chaos, recorded: it must exit 0 and
/// respect the prefix in force (rules 1 and 2), or, when a smaller cutoff was published while
/// it ran, contain the last one with its verified histories. Returns whether that happened.
fn checked_run(name: &str, prog: &Path, id: shared_proto::ProgramId, trace_path: &Path, i: usize) -> bool {
    use shared_proto::prefix_segment::PrefixView;
    let before = segment_log(id).unwrap().1.len();
    let o = run(
        Command::new(prog).env("IRS_MODE", "enforce").env("IRS_PREFIX", "installed").env("IRS_CHAOS", "1").env("IRS_TRACE", trace_path),
        None,
        T,
    )
    .unwrap();
    let (bytes, log) = segment_log(id).unwrap();
    let view = PrefixView::parse(&bytes, Some(id)).unwrap();
    assert!(o.status.success(), "{name} run {i} under the prefix failed ({}): {}", o.how(), o.stderr);
    assert!(!o.stderr.contains("irs-runtime"), "{name} run {i}: {}", o.stderr);
    let t = shared_proto::Trace::read(trace_path).unwrap();
    let changed = log.len() != before;
    // The smallest cutoff the run may have adopted (the latest published once it ended).
    let cut = if changed { &log[log.len() - 1] } else { &log[before - 1] };
    let result = shared_proto::prefix_check::check_histories(&t, &view, cut, Default::default());
    if let Err(e) = result {
        panic!("{name} run {i} (cutoffs {before} -> {}): {e}\n{}", log.len(), irs::trace_view::table(&t));
    }
    changed
}

/// One program: its verifier publishing in the background while it runs under the segment
/// with chaos, recorded, again and again. Returns (runs, runs during which a smaller cutoff
/// was published).
fn stress(p: &StressProgram) -> (usize, usize) {
    use shared_proto::prefix_segment::PrefixView;
    let d = scratch(&format!("irs_service/stress/{}", p.name));
    let mut args: Vec<&str> = vec!["-O2", "-pthread"];
    args.extend(p.defines);
    let src = repo().join(p.src).display().to_string();
    args.extend(["-o", p.name, &src]);
    irs_cc(&d, &args).unwrap();
    let prog = d.join(p.name);
    let id = irs::service::program_id(&prog.display().to_string(), &[]).unwrap();
    irs::service::forget(id);
    let _reset = Reset(id);
    let mut verify = Command::new(irs());
    verify.args(["verify", "--publish", "--anchor", "default", "--json", "--out-dir"]).arg(&d);
    if let Some(t) = p.time_limit {
        verify.args(["--time-limit", t]);
    }
    let mut verifier = verify.arg("--").arg(&prog).stdout(std::process::Stdio::piped()).stderr(std::process::Stdio::null()).spawn().unwrap();
    let out_pipe = verifier.stdout.take().unwrap();
    let json = std::thread::spawn(move || std::io::read_to_string(out_pipe).unwrap_or_default());
    wait_until(&format!("{}'s first prefix", p.name), Duration::from_secs(60), || segment_log(id).is_some());
    let trace_path = d.join("run.trace");
    let (mut runs, mut changed) = (0, 0);
    let mut verifier_done = false;
    while !verifier_done || runs < STRESS_RUNS {
        changed += checked_run(p.name, &prog, id, &trace_path, runs) as usize;
        runs += 1;
        verifier_done = verifier_done || verifier.try_wait().unwrap().is_some();
    }
    verifier.wait().unwrap();
    let out = json.join().unwrap();
    let j: serde_json::Value = serde_json::from_str(out.lines().last().unwrap_or_default()).unwrap_or_else(|e| panic!("{}: no JSON ({e}): {out}", p.name));
    let verdict = match p.expect {
        Expect::Safe => "safe",
        Expect::Bug => "violation",
    };
    assert_eq!(j["verdict"], verdict, "{}: {j}", p.name);
    // The cutoffs never grow; the last is empty exactly when the program was verified safe.
    let (bytes, log) = segment_log(id).unwrap();
    for w in log.windows(2) {
        assert!(w[1].iter().zip(&w[0]).all(|(a, b)| a <= b), "{}: a larger cutoff was published: {:?} then {:?}", p.name, w[0], w[1]);
    }
    let view = PrefixView::parse(&bytes, Some(id)).unwrap();
    let last = &log[log.len() - 1];
    match p.expect {
        Expect::Safe => assert!(last.iter().all(|&c| c == 0), "{}: {log:?}", p.name),
        Expect::Bug => assert!(last.iter().any(|&c| c > 0), "{}: {log:?}", p.name),
    }
    if p.expect == Expect::Bug {
        assert!(view.constraints_within(last) > 0, "{}: {log:?}", p.name);
    }
    eprintln!("{}: {runs} runs, {changed} while a smaller cutoff was published, {} cutoffs, verdict {}", p.name, log.len(), j["verdict"]);
    (runs, changed)
}

/// The IRS paper's programs and a buggy one, each run many times with chaos and recorded while
/// its verifier publishes relaxations: no run fails, every recorded run respects the prefix in
/// force (or, when a smaller one came during the run, contains it with its verified histories),
/// cutoffs only shrink, and only the safe programs end unconstrained.
#[test]
fn chaos_runs_under_live_relaxation_respect_the_prefix() {
    let queue = std::sync::Mutex::new(STRESS.iter().collect::<Vec<_>>());
    let totals = std::sync::Mutex::new((0, 0));
    std::thread::scope(|s| {
        for _ in 0..2 {
            s.spawn(|| loop {
                let Some(p) = queue.lock().unwrap().pop() else { break };
                let (r, c) = stress(p);
                let mut t = totals.lock().unwrap();
                t.0 += r;
                t.1 += c;
            });
        }
    });
    let (runs, changed) = *totals.lock().unwrap();
    eprintln!("{runs} runs in all, {changed} of them while a smaller cutoff was published");
    // How many runs see a relaxation depends on timing; the next test makes sure many do.
    assert!(runs >= 1000, "{runs}");
}

/// The demo's bank, small (4 tellers, 20 µs network): about 600 traces, with the bug.
fn small_bank(d: &Path) -> PathBuf {
    let src = repo().join("examples/bank.c").display().to_string();
    irs_cc(d, &["-O2", "-pthread", "-DTELLERS=4", "-DNET_US=20", "-o", "bank", &src]).unwrap();
    d.join("bank")
}

/// The trace of the default schedule (the verifier's first execution) of `prog`.
fn default_trace(prog: &Path, out: &Path) {
    let o = run(Command::new(irs()).args(["replay", "--schedule-default", "--trace-out"]).arg(out).arg("--").arg(prog), None, T).unwrap();
    assert!(o.status.success(), "{}{}", o.stdout, o.stderr);
}

/// The checks above are not vacuous: chaos without a prefix exposes the bank's bug, and runs
/// without a prefix break the histories of the first execution's prefix.
#[test]
fn without_irs_the_stress_program_fails_and_breaks_the_prefix() {
    use shared_proto::prefix_segment::PrefixView;
    let d = scratch("irs_service/no_irs");
    let prog = small_bank(&d);
    let trace_path = d.join("run.trace");
    default_trace(&prog, &trace_path);
    let mut views = Vec::new();
    for (file, keep) in [("full.prefix", None), ("part.prefix", Some("8"))] {
        let mut cmd = Command::new(irs());
        cmd.args(["constrain", "--trace"]).arg(&trace_path).arg("--out").arg(d.join(file));
        if let Some(k) = keep {
            cmd.args(["--keep", k]);
        }
        assert!(run(&mut cmd, None, T).unwrap().status.success());
        views.push(std::fs::read(d.join(file)).unwrap());
    }
    let views: Vec<PrefixView> = views.iter().map(|b| PrefixView::parse(b, None).unwrap()).collect();
    assert!(views[1].cutoff(0).iter().zip(&views[0].cutoff(0)).any(|(a, b)| a < b), "the partial cutoff leaves events outside");
    let mut failed = 0;
    let mut broken = [0; 2];
    for _ in 0..300 {
        let o = run(Command::new(&prog).env("IRS_MODE", "record").env("IRS_CHAOS", "1").env("IRS_TRACE", &trace_path), None, T).unwrap();
        failed += !o.status.success() as usize;
        let t = shared_proto::Trace::read(&trace_path).unwrap();
        for (v, b) in views.iter().zip(broken.iter_mut()) {
            *b += shared_proto::prefix_check::check_histories(&t, v, &v.cutoff(0), Default::default()).is_err() as usize;
        }
    }
    assert!(failed > 0, "chaos alone never exposed the lost transfer");
    assert!(broken.iter().all(|&b| b > 0), "300 unconstrained runs all had a prefix's histories: {broken:?}");
}

/// Relaxations published at a steady pace while two runners run the bank with chaos: many runs
/// adopt a smaller cutoff while they run, and every one of them still exits 0 and contains the
/// cutoff it ended with, with its verified histories. The cutoffs are the ones the verifier
/// published for the bank (each proven to exclude the bug), replayed ten times over.
#[test]
fn cutoffs_adopted_mid_run_keep_the_verified_histories() {
    let d = scratch("irs_service/mid_run");
    let prog = small_bank(&d);
    let id = irs::service::program_id(&prog.display().to_string(), &[]).unwrap();
    irs::service::forget(id);
    let _reset = Reset(id);
    let o = run(Command::new(irs()).args(["verify", "--publish", "--anchor", "default", "--json", "--out-dir"]).arg(&d).arg("--").arg(&prog), None, T).unwrap();
    let j: serde_json::Value = serde_json::from_str(o.stdout.lines().last().unwrap_or_default()).unwrap_or_else(|e| panic!("{e}: {}", o.stdout));
    assert_eq!(j["verdict"], "violation", "{j}");
    let cuts: Vec<Vec<u32>> = j["published"]["log"].as_array().unwrap().iter().map(|s| s["cut"].as_array().unwrap().iter().map(|c| c.as_u64().unwrap() as u32).collect()).collect();
    assert!(cuts.len() >= 5, "{j}");
    // The verifier's first execution is the default schedule's: the same table, fresh.
    let trace = d.join("first.trace");
    default_trace(&prog, &trace);
    let full = d.join("full.prefix");
    assert!(run(Command::new(irs()).args(["constrain", "--trace"]).arg(&trace).arg("--out").arg(&full), None, T).unwrap().status.success());
    let segment = shared_proto::prefix_segment::segment_path(id);
    let (mut runs, mut changed) = (0, 0);
    for cycle in 0..10 {
        irs::constrain::install(&full).unwrap();
        assert_eq!(segment_log(id).unwrap().1, cuts[..1], "the verifier's first cutoff is the whole default trace");
        let stop = std::sync::atomic::AtomicBool::new(false);
        let counts = std::sync::Mutex::new((0, 0));
        std::thread::scope(|s| {
            for r in 0..2 {
                let (prog, stop, counts) = (&prog, &stop, &counts);
                let trace_path = d.join(format!("run{r}.trace"));
                s.spawn(move || {
                    let mut i = 0;
                    while !stop.load(std::sync::atomic::Ordering::SeqCst) {
                        let c = checked_run("bank", prog, id, &trace_path, cycle * 1000 + i);
                        let mut n = counts.lock().unwrap();
                        n.0 += 1;
                        n.1 += c as usize;
                        i += 1;
                    }
                });
            }
            for cut in &cuts[1..] {
                std::thread::sleep(Duration::from_millis(8));
                irs::constrain::relax(&segment, cut).unwrap();
            }
            std::thread::sleep(Duration::from_millis(20));
            stop.store(true, std::sync::atomic::Ordering::SeqCst);
        });
        let n = counts.lock().unwrap();
        runs += n.0;
        changed += n.1;
    }
    eprintln!("{runs} runs, {changed} of them adopted a smaller cutoff while they ran");
    assert!(changed >= 20, "only {changed} of {runs} runs saw a relaxation while they ran");
}
