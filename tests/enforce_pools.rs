//! Enforcement never hangs or aborts a run that the plain build completes (DESIGN §4;
//! docs/enforcement-progress.md), on thread pools written like real ones
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
    let o = run(Command::new(irs()).args(["verify", "--publish", "--time-limit", "10", "--"]).arg(exe).args(args).current_dir(d), None, Duration::from_secs(120)).unwrap();
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

/// Run `cmd` `n` times; every run must end within the watchdog, with 0 and `expect` on stdout.
fn each(what: &str, n: usize, expect: &str, mut cmd: impl FnMut() -> Command) -> Vec<String> {
    let mut failures = Vec::new();
    for i in 0..n {
        match run(&mut cmd(), None, WATCHDOG) {
            Err(e) => failures.push(format!("{what}, run {i}: hung: {e}")),
            Ok(o) if !o.status.success() || o.stdout.trim() != expect => {
                failures.push(format!("{what}, run {i}: {} stdout {:?}: {}", o.how(), o.stdout.trim(), o.stderr.trim()))
            }
            Ok(_) => {}
        }
        if failures.len() > 3 {
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
    let args = ["3", "6"];
    let expect = plain_says(&exe, &args);
    let (last, anchored) = publish(&d, &exe, &args);
    let n = runs();
    let mut failures = under_prefixes(&exe, &args, &[anchored, last], &expect, n);
    failures.extend(unverified(&exe, &args, &expect, n));
    assert!(failures.is_empty(), "{}", failures.join("\n"));
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
