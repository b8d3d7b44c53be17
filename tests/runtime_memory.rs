//! The runtime keeps nothing of an object after its `destroy`, nor of a thread after its end
//! (docs/src/runtime-memory.md): `tests/programs/memory/object_churn.c` makes and destroys a mutex,
//! a condition variable, a semaphore, an rwlock and a barrier, and two threads that wait on
//! them, round after round.
//!
//! - Run directly (OFF), the program's heap under valgrind is the plain build's: as many
//!   allocations and frees as clang's build makes (a library's own leak test compares them).
//! - Serialised and shaken (`irs run`'s modes with no prefix to follow, where every primitive
//!   runs on the runtime's own state), what the heap still holds at the end after 200 rounds is
//!   within 10 blocks of what it holds after 20, and the peak RSS after 4,000 rounds is within
//!   1 MB of that after 400.

mod common;

use common::*;
use std::path::Path;
use std::process::Command;
use std::time::Duration;

fn build(d: &Path) -> (std::path::PathBuf, std::path::PathBuf) {
    let src = repo().join("tests/programs/memory/object_churn.c");
    irs_cc(d, &["-O1", "-pthread", "-o", "churn", src.to_str().unwrap()]).unwrap();
    plain_cc(d, &["-O1", "-pthread", "-o", "churn.plain", src.to_str().unwrap()]).unwrap();
    (d.join("churn"), d.join("churn.plain"))
}

/// The environment of each way the program runs.
const MODES: [(&str, &[(&str, &str)]); 3] = [("direct", &[]), ("serialised", &[("IRS_MODE", "enforce"), ("IRS_SERIAL", "1")]), ("shaken", &[("IRS_CHAOS", "1")])];

fn run_churn(exe: &Path, env: &[(&str, &str)], rounds: u32, valgrind: bool) -> Output {
    let mut cmd = if valgrind {
        let mut c = Command::new("valgrind");
        c.args(["--leak-check=full", "--error-exitcode=99"]).arg(exe);
        c
    } else {
        Command::new(exe)
    };
    cmd.arg(rounds.to_string()).envs(env.iter().copied());
    let o = run(&mut cmd, None, Duration::from_secs(300)).unwrap();
    assert_eq!(o.status.code(), Some(0), "{} {rounds}: {}", exe.display(), o.stderr);
    assert_eq!(o.stdout.trim(), format!("rounds {rounds} total {rounds}"), "{}", o.stderr);
    o
}

/// valgrind's (allocations, frees) and whether it found a block lost.
fn heap(o: &Output) -> (u64, u64, bool) {
    let line = o.stderr.lines().find(|l| l.contains("total heap usage")).unwrap_or_else(|| panic!("no heap summary:\n{}", o.stderr));
    let num = |word: &str| -> u64 {
        let before = line.split(word).next().unwrap();
        before.split_whitespace().last().unwrap().replace(',', "").parse().unwrap()
    };
    let lost = o.stderr.lines().any(|l| (l.contains("definitely lost:") || l.contains("indirectly lost:") || l.contains("possibly lost:")) && !l.contains(" 0 bytes in 0 blocks"));
    (num(" allocs"), num(" frees"), lost)
}

fn peak_kb(o: &Output) -> i64 {
    o.stderr.lines().find_map(|l| l.strip_prefix("maxrss_kb ")).and_then(|v| v.trim().parse().ok()).unwrap_or_else(|| panic!("no maxrss line:\n{}", o.stderr))
}

#[test]
fn the_runtime_keeps_nothing_of_destroyed_objects_and_ended_threads() {
    let d = scratch("runtime_memory");
    let (exe, plain) = build(&d);
    assert!(Command::new("valgrind").arg("--version").output().is_ok_and(|o| o.status.success()), "valgrind is missing (scripts/setup.sh installs it)");
    let mut failures = Vec::new();
    let (pa, pf, _) = heap(&run_churn(&plain, &[], 50, true));
    for (name, env) in MODES {
        let small = heap(&run_churn(&exe, env, 20, true));
        let big = heap(&run_churn(&exe, env, 200, true));
        if small.2 || big.2 {
            failures.push(format!("{name}: valgrind found a block lost"));
        }
        if name == "direct" {
            let direct = heap(&run_churn(&exe, env, 50, true));
            if direct.0 != direct.1 || (direct.0, direct.1) != (pa, pf) {
                failures.push(format!("direct: {} allocs and {} frees where the plain build makes {pa} and {pf}", direct.0, direct.1));
            }
        }
        // What stays for the whole run is bounded but depends a little on timing (how many
        // threads were ever alive at once: the serialised run's table, parking_lot's, which it
        // grows and never shrinks); a leak per round would keep 180 more blocks after 200.
        let (kept_small, kept_big) = (small.0 - small.1, big.0 - big.1);
        if kept_big > kept_small + 10 {
            failures.push(format!("{name}: the heap keeps {kept_small} blocks after 20 rounds, {kept_big} after 200"));
        }
        let (a, b) = (peak_kb(&run_churn(&exe, env, 400, false)), peak_kb(&run_churn(&exe, env, 4000, false)));
        if b - a > 1024 {
            failures.push(format!("{name}: peak RSS {a} KB after 400 rounds, {b} KB after 4000"));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
