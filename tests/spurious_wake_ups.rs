//! `irs verify --spurious-wake-ups` (docs/src/design-notes-spurious-wakeups.md): a wait on a
//! condition variable may return without a signal wherever the exploration puts it. Checked
//! against the brute-force oracle run with the same option (every interleaving of the runtime's
//! operations, a failed try of a waiter's gate included), on the oracle programs
//! `tests/verify_programs/cond_spurious_{if,while}.c`: the `if` program's assertion fails only
//! with spurious wake-ups explored, the `while` one is plain `safe` with them (its wait loop is a
//! spin-wait: a wake-up that changes nothing and waits again ends the execution, discarded).

mod common;
#[path = "common/oracle.rs"]
#[allow(dead_code)]
mod oracle;
#[path = "common/verify_check.rs"]
#[allow(dead_code)]
mod verify_check;

use common::*;
use irs_verifier::executor::{Executor, Options};
use std::process::Command;

/// Build the oracle program `name` in a scratch directory of the test `test`'s own.
fn build(test: &str, name: &str) -> (std::path::PathBuf, std::path::PathBuf) {
    let dir = scratch(&format!("spurious_wake_ups/{test}/{name}"));
    let src = repo().join("tests/verify_programs").join(format!("{name}.c"));
    let exe = dir.join(name);
    irs_cc(&dir, &["-O1", "-pthread", "-o", exe.to_str().unwrap(), src.to_str().unwrap()]).unwrap();
    (dir, exe)
}

#[test]
fn spurious_wake_ups_are_explored_when_asked_as_the_oracle_explores_them() {
    for (name, bugs) in [("cond_spurious_if", vec!["assert"]), ("cond_spurious_while", vec![])] {
        let (dir, exe) = build("oracle", name);
        let mut ex = Executor::start(&exe, &[], Options { spurious_wake_ups: true, ..Options::default() }).unwrap();
        let truth = oracle::explore_all(&mut ex, 20_000).unwrap();
        let found: Vec<String> = truth.bug_set().iter().map(|b| b.kind.clone()).collect();
        assert_eq!(found, bugs, "{name}: the oracle's bugs with spurious wake-ups");
        for (mode, args) in [("optimal-spurious", &["--optimal", "--spurious-wake-ups"][..]), ("k1-spurious", &["--k", "1", "--spurious-wake-ups"][..])] {
            let rep = verify_check::run_verify(&exe, args, &dir.join(mode)).unwrap();
            let (fails, _) = verify_check::check_report(name, mode, &rep, &mut ex, &truth);
            assert!(fails.is_empty(), "{}", fails.join("\n"));
        }
    }
}

#[test]
fn a_bug_only_a_spurious_wake_up_reaches_is_found_and_replays_with_the_option() {
    let (dir, exe) = build("replay", "cond_spurious_if");
    let verify = |extra: &[&str]| run(Command::new(irs()).arg("verify").args(extra).arg("--").arg(&exe).current_dir(&dir), None, T).unwrap();
    let o = verify(&[]);
    assert!(o.stdout.contains("verdict: safe-within-bounds (no spurious wake-ups of condition-variable waits"), "{}", o.stdout);
    let o = verify(&["--spurious-wake-ups"]);
    assert_eq!(o.status.code(), Some(1), "{}", o.stdout);
    let line = o.stdout.lines().find_map(|l| l.trim().strip_prefix("reproduce: ")).unwrap_or_else(|| panic!("{}", o.stdout)).to_string();
    assert!(line.contains("--spurious-wake-ups"), "the replay command asks for them too: {line}");
    let sched = line.split_whitespace().skip_while(|w| *w != "--schedule").nth(1).unwrap();
    let r = run(Command::new(irs()).args(["replay", "--spurious-wake-ups", "--schedule", sched, "--"]).arg(&exe).current_dir(&dir), None, T).unwrap();
    assert!(r.stdout.contains("outcome: violation assert"), "{}", r.stdout);
    // A run under irs cannot reproduce a spurious wake-up yet: no publishing with them.
    let o = verify(&["--spurious-wake-ups", "--publish"]);
    assert!(o.status.code() == Some(2) && o.stderr.contains("--publish"), "{}{}", o.stdout, o.stderr);
}
