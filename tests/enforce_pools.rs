//! Enforcement never hangs or aborts a run that the plain build completes (DESIGN §4;
//! docs/src/enforcement-progress.md), on thread pools written like real ones
//! (`tests/programs/pools/`): Pithikos' C-Thread-Pool (a job queue, a binary semaphore made of a
//! mutex and a condition variable, keep-alive flags read without synchronisation, a `destroy`
//! that polls with `time` and `sleep`, pause and resume through SIGUSR1 whose handler runs
//! instrumented code) and mbrossard's threadpool (a `free` that locks the pool's mutex and
//! destroys it while it is locked, then a second pool made in the same memory).
//!
//! Each program is verified with `--publish`; then it runs under `irs run` with the prefix its
//! verification anchored (the whole first table) and with the last one it published, with and
//! without `--chaos`, serialised (what `irs run` does where no verification covers a run: the
//! paused pool's `pthread_kill` is not modelled, so its verification publishes nothing), and
//! shaken with no prefix. Every run has a watchdog: none may hang, abort or fail.
//!
//! `IRS_POOL_RUNS=N` runs each configuration N times (default 4: tens of seconds in all).

mod common;

use common::*;
use shared_proto::prefix_segment::{PrefixView, PUBLISHED_OFFSET};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

/// How long one run may take: a serialised run of the paused pool takes seconds (its `destroy`
/// polls for a second, then sleeps a second per thread still alive).
const WATCHDOG: Duration = Duration::from_secs(40);

fn runs() -> usize {
    std::env::var("IRS_POOL_RUNS").ok().and_then(|v| v.parse().ok()).unwrap_or(4)
}

fn build(d: &Path, name: &str) -> PathBuf {
    let src = repo().join(format!("tests/programs/pools/{name}.c"));
    irs_cc(d, &["-O2", "-pthread", "-w", "-o", name, src.to_str().unwrap()]).unwrap();
    plain_cc(d, &["-O2", "-pthread", "-w", "-o", &format!("{name}.plain"), src.to_str().unwrap()]).unwrap();
    d.join(name)
}

/// `irs verify --publish` (bounded), then the published segment copied to `d/NAME.prefix` (and
/// removed from /dev/shm) and a copy with only its first cutoff, the anchored prefix:
/// `(last, anchored)`.
fn publish(d: &Path, exe: &Path, args: &[&str]) -> (PathBuf, PathBuf) {
    let o = run(Command::new(irs()).args(["verify", "--publish", "--anchor", "default", "--time-limit", "10", "--"]).arg(exe).args(args).current_dir(d), None, Duration::from_secs(120)).unwrap();
    let text = format!("{}{}", o.stdout, o.stderr);
    let segment = text
        .lines()
        .find_map(|l| l.strip_prefix("published to ").and_then(|r| r.split(':').next()))
        .unwrap_or_else(|| panic!("verify --publish published nothing:\n{text}"));
    let name = exe.file_name().unwrap().to_string_lossy().into_owned();
    let last = d.join(format!("{name}.prefix"));
    std::fs::copy(segment, &last).unwrap();
    let _ = std::fs::remove_file(segment);
    let mut bytes = std::fs::read(&last).unwrap();
    bytes[PUBLISHED_OFFSET..PUBLISHED_OFFSET + 4].copy_from_slice(&1u32.to_le_bytes());
    let view = PrefixView::parse(&bytes, None).unwrap();
    assert!(view.constraints_within(&view.cutoff(0)) > 0, "{name}: the anchored prefix constrains nothing");
    let anchored = d.join(format!("{name}.anchored.prefix"));
    std::fs::write(&anchored, &bytes).unwrap();
    (last, anchored)
}

/// `run` in a process group of its own, killed whole at the watchdog: a program hung under
/// `irs run` is `irs`'s child, and must not outlive the test.
fn watched(cmd: &mut Command) -> Result<Output, String> {
    use std::os::unix::process::CommandExt;
    cmd.process_group(0);
    let out = std::sync::Arc::new(std::sync::Mutex::new(None));
    let (tx, rx) = std::sync::mpsc::channel();
    let mut child = cmd.stdin(std::process::Stdio::null()).stdout(std::process::Stdio::piped()).stderr(std::process::Stdio::piped()).spawn().map_err(|e| e.to_string())?;
    let pid = child.id() as i32;
    let (o, e) = (child.stdout.take().unwrap(), child.stderr.take().unwrap());
    let keep = out.clone();
    std::thread::spawn(move || {
        let err = std::thread::spawn(move || std::io::read_to_string(e).unwrap_or_default());
        let stdout = std::io::read_to_string(o).unwrap_or_default();
        *keep.lock().unwrap() = Some((stdout, err.join().unwrap()));
        let _ = tx.send(());
    });
    let start = std::time::Instant::now();
    loop {
        if let Some(status) = child.try_wait().map_err(|e| e.to_string())? {
            // The pipes close when every process of the group has gone.
            let _ = rx.recv_timeout(Duration::from_secs(5));
            // SAFETY: kill has no memory preconditions; the group is the one spawned here.
            unsafe { libc::kill(-pid, libc::SIGKILL) };
            let (stdout, stderr) = out.lock().unwrap().take().unwrap_or_default();
            return Ok(Output { status, stdout, stderr });
        }
        if start.elapsed() > WATCHDOG {
            // SAFETY: as above.
            unsafe { libc::kill(-pid, libc::SIGKILL) };
            let _ = child.wait();
            return Err(format!("{cmd:?} did not finish within {WATCHDOG:?}"));
        }
        std::thread::sleep(Duration::from_millis(5));
    }
}

/// Run `cmd` `n` times; every run must end within the watchdog, with 0 and `expect` on stdout.
fn each(what: &str, n: usize, expect: &str, mut cmd: impl FnMut() -> Command) -> Vec<String> {
    let mut failures = Vec::new();
    for i in 0..n {
        match watched(&mut cmd()) {
            Err(e) => {
                failures.push(format!("{what}, run {i}: hung: {e}"));
                break;
            }
            Ok(o) if !o.status.success() || o.stdout.trim() != expect => {
                failures.push(format!("{what}, run {i}: {} stdout {:?}: {}", o.how(), o.stdout.trim(), o.stderr.trim()))
            }
            Ok(_) => {}
        }
        if failures.len() > 1 {
            break;
        }
    }
    failures
}

/// Under `irs run` with each prefix, with and without chaos.
fn under_prefixes(exe: &Path, args: &[&str], prefixes: &[PathBuf], expect: &str, n: usize) -> Vec<String> {
    let mut failures = Vec::new();
    for p in prefixes {
        for chaos in [false, true] {
            let what = format!("{} {args:?} under {}{}", exe.display(), p.display(), if chaos { " --chaos" } else { "" });
            failures.extend(each(&what, n, expect, || {
                let mut c = Command::new(irs());
                c.arg("run").arg("--prefix").arg(p);
                if chaos {
                    c.arg("--chaos");
                }
                c.arg("--").arg(exe).args(args);
                c
            }));
        }
    }
    failures
}

/// Serialised from the start (`IRS_SERIAL=1`: what `irs run` does with a run no verification
/// covers) and shaken with no prefix (`IRS_CHAOS=1`).
fn unverified(exe: &Path, args: &[&str], expect: &str, n: usize) -> Vec<String> {
    let mut failures = each(&format!("{} {args:?} serialised", exe.display()), n, expect, || {
        let mut c = Command::new(exe);
        c.args(args).env("IRS_MODE", "enforce").env("IRS_SERIAL", "1");
        c
    });
    failures.extend(each(&format!("{} {args:?} with chaos", exe.display()), n, expect, || {
        let mut c = Command::new(exe);
        c.args(args).env("IRS_CHAOS", "1");
        c
    }));
    failures
}

fn plain_says(exe: &Path, args: &[&str]) -> String {
    let plain = exe.with_extension("plain");
    let o = run(Command::new(&plain).args(args), None, WATCHDOG).unwrap();
    assert!(o.status.success(), "the plain build fails: {} {}", o.how(), o.stderr);
    o.stdout.trim().to_string()
}

#[test]
fn a_pool_with_a_job_queue_condvars_and_a_polling_destroy_never_hangs() {
    let d = scratch("enforce_pools/cthpool");
    let exe = build(&d, "cthpool");
    let args = ["4", "8"];
    let expect = plain_says(&exe, &args);
    // Its `destroy` polls the clock, which EXPLORE reads as virtual time: its default schedule
    // ends, and the table is anchored on it. The runs recorded alongside must take the verified
    // trace's waiter at every choice inside the prefix (when an anchor found by random search
    // woke another than the first, a run that woke the first hung: its waiter stayed blocked
    // while the others waited for its events).
    let published = publish(&d, &exe, &args);
    let (last, anchored) = published;
    let n = runs();
    let mut failures = recorded_under(&d, &exe, &args, &anchored, &expect, n);
    failures.extend(under_prefixes(&exe, &args, &[anchored, last], &expect, n));
    failures.extend(unverified(&exe, &args, &expect, n));
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// Runs under `prefix` (with chaos) recorded alongside: each must respect the prefix (rules 1
/// and 2) and choose, at every choice inside it, the value the verified trace chose (a wrong
/// waiter woken does not always hang a run, but it is a run the verifier never explored).
fn recorded_under(d: &Path, exe: &Path, args: &[&str], prefix: &Path, expect: &str, n: usize) -> Vec<String> {
    let bytes = std::fs::read(prefix).unwrap();
    let view = PrefixView::parse(&bytes, None).unwrap();
    let cut = view.cutoff(view.published() - 1);
    let trace_path = d.join("run.trace");
    let mut failures = Vec::new();
    for i in 0..n {
        let what = format!("{} {args:?} under {} recorded, run {i}", exe.display(), prefix.display());
        let o = match watched(Command::new(exe).args(args).env("IRS_PREFIX", prefix).env("IRS_CHAOS", "1").env("IRS_TRACE", &trace_path)) {
            Err(e) => {
                failures.push(format!("{what}: hung: {e}"));
                break;
            }
            Ok(o) => o,
        };
        if !o.status.success() || o.stdout.trim() != expect {
            failures.push(format!("{what}: {} stdout {:?}: {}", o.how(), o.stdout.trim(), o.stderr.trim()));
            continue;
        }
        // The one thing outside the input: `destroy`'s first loop polls until `time` has moved
        // by a second, which may come after any number of iterations. A run that leaves the
        // trace there is serialised from there on (not a failure); anywhere else it is one.
        if o.stderr.contains("left the verified trace") {
            let at_destroy = o.stderr.lines().filter(|l| l.contains("left the verified trace")).all(|l| l.matches("in thpool_destroy").count() == 2);
            if !at_destroy {
                failures.push(format!("{what}: {}", o.stderr.trim()));
            }
            continue;
        }
        let t = shared_proto::Trace::read(&trace_path).unwrap();
        if let Err(e) = shared_proto::prefix_check::check_histories(&t, &view, &cut, Default::default()) {
            failures.push(format!("{what}: the run broke the prefix: {e}"));
        }
        for e in &t.events {
            if let shared_proto::ObjectRef::Choice { value, .. } = e.object {
                let want = (e.k < cut[e.tid.index()]).then(|| view.choice(e.tid, e.k)).flatten();
                if want.is_some_and(|w| w != value) {
                    failures.push(format!("{what}: {}#{} chose {value}, the verified trace {want:?}", e.tid, e.k));
                }
            }
        }
    }
    failures
}

#[test]
fn a_pool_paused_through_signals_whose_handler_runs_instrumented_code_never_hangs() {
    let d = scratch("enforce_pools/cthpool_pause");
    let exe = build(&d, "cthpool");
    let args = ["2", "4", "pause"];
    let expect = plain_says(&exe, &args);
    // Its handler interrupts threads inside the runtime: waiting in a condition variable, for
    // the turn of a serialised run, holding it.
    let failures = unverified(&exe, &args, &expect, n_signal());
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// The paused pool's serialised runs take seconds each (its `destroy` polls): fewer of them.
fn n_signal() -> usize {
    runs().div_ceil(2)
}

#[test]
fn a_pool_whose_free_destroys_its_locked_mutex_is_verified_and_runs() {
    let d = scratch("enforce_pools/mbpool");
    let exe = build(&d, "mbpool");
    // A mutex destroyed while locked by its holder and initialised again is a fresh one: no
    // deadlock verdict (it was one: "T0 waits for mutex ... held by T0").
    let o = run(Command::new(irs()).args(["verify", "--time-limit", "60", "--"]).arg(&exe).args(["1", "1", "2"]).current_dir(&d), None, Duration::from_secs(120)).unwrap();
    assert!(o.stdout.contains("verdict: safe"), "{}{}", o.stdout, o.stderr);
    let args = ["2", "3", "2"];
    let expect = plain_says(&exe, &args);
    let (last, anchored) = publish(&d, &exe, &args);
    let n = runs();
    let mut failures = under_prefixes(&exe, &args, &[anchored, last], &expect, n);
    failures.extend(unverified(&exe, &args, &expect, n));
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn a_pool_timed_with_sleeps_keeps_its_timing_under_irs_run() {
    // Like the library's own api.c: jobs that sleep, then `main` sleeps and counts the threads
    // working. The verifier's first execution, on which the prefix is anchored, lets the
    // threads that did not sleep go first, as the OS does: the jobs start before `main` counts,
    // and a run under the prefix counts them all (it counted none: every run exited 1).
    let d = scratch("enforce_pools/cthpool_count");
    let exe = build(&d, "cthpool");
    let args = ["4", "3", "count"];
    let expect = plain_says(&exe, &args);
    let (last, anchored) = publish(&d, &exe, &args);
    let n = n_signal();
    let mut failures = under_prefixes(&exe, &args, &[anchored, last], &expect, n);
    // Like pause_resume.c: paused, jobs added, resumed while `main` sleeps, destroyed without
    // waiting. A serialised `main` does not hold the turn while it sleeps, so the resumed
    // threads take the jobs meanwhile (they took none: the jobs were dropped at `destroy`).
    // Serialised only: with chaos's delays, the pause may catch a thread that holds the pool's
    // lock (between its lock and its `pthread_cond_wait`), whose handler then waits for a resume
    // that `main`, blocked on that lock, never sends: a race of the program itself (the
    // library's pause_resume test has it), which chaos widens from nanoseconds to milliseconds.
    let paused = ["2", "4", "paused"];
    let expect_paused = plain_says(&exe, &paused);
    failures.extend(unverified(&exe, &args, &expect, n));
    failures.extend(each(&format!("{} {paused:?} serialised", exe.display()), n, &expect_paused, || {
        let mut c = Command::new(&exe);
        c.args(paused).env("IRS_MODE", "enforce").env("IRS_SERIAL", "1");
        c
    }));
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
