//! An explored execution does no harm (DESIGN §7, docs/src/sandbox.md): programs that change the
//! file system, signal other processes, talk over the network and start processes, built with
//! the real `irs cc` and verified with the real `irs verify`; the world outside the verifier's
//! scratch space must be exactly as it was, and every execution must start from a fresh view.

mod common;

use common::*;
use std::collections::BTreeMap;
use std::path::Path;
use std::process::Command;

fn build(name: &str) -> std::path::PathBuf {
    build_in(name, name)
}

/// Build `name` in a scratch directory of its own, `sandbox-<place>`.
fn build_in(name: &str, place: &str) -> std::path::PathBuf {
    let dir = scratch(&format!("sandbox-{place}"));
    let src = repo().join("tests/programs/sandbox").join(format!("{name}.c"));
    std::fs::copy(&src, dir.join(format!("{name}.c"))).unwrap();
    irs_cc(&dir, &[&format!("{name}.c"), "-o", name, "-lpthread"]).unwrap();
    dir
}

/// Every file under `dir` (recursively) with its bytes, and every directory.
fn contents(dir: &Path) -> BTreeMap<String, Option<Vec<u8>>> {
    let mut out = BTreeMap::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let p = e.unwrap().path();
            let key = p.strip_prefix(dir).unwrap().display().to_string();
            if p.is_dir() {
                out.insert(key, None);
                stack.push(p);
            } else {
                out.insert(key, Some(std::fs::read(&p).unwrap()));
            }
        }
    }
    out
}

fn verify(dir: &Path, extra: &[&str], program: &[&str]) -> Output {
    run(Command::new(irs()).arg("verify").args(extra).arg("--").args(program).current_dir(dir), None, T).unwrap()
}

fn lay_out(dir: &Path) {
    for (f, text) in [("keep.txt", "keep\n"), ("move_me.txt", "move\n"), ("delete_me.txt", "delete\n")] {
        std::fs::write(dir.join(f), text).unwrap();
    }
}

#[test]
fn file_system_changes_of_every_execution_are_private_and_discarded() {
    let dir = build("fs_changes");
    lay_out(&dir);
    let outside = std::env::temp_dir().join(format!("irs-sandbox-outside-{}", std::process::id()));
    let _ = std::fs::remove_file(&outside);
    let before = contents(&dir);
    // The persistent worker, a process per execution, and snapshots forced at every branch
    // (an execution that changed its view declines to pause; runs go on from `main`).
    for extra in [&[][..], &["--fork-each"][..], &["--snapshot-gap", "1"][..]] {
        let out = verify(&dir, extra, &["./fs_changes", outside.to_str().unwrap()]);
        assert_eq!(out.how(), "exit 0", "irs verify {extra:?}: every execution starts from the laid-out directory\n{}\n{}", out.stdout, out.stderr);
        assert!(out.stdout.contains("verdict: safe"), "{}", out.stdout);
        let executions: u64 = out.stdout.lines().find_map(|l| l.strip_prefix("executions: ")).and_then(|l| l.split_whitespace().next()).and_then(|n| n.parse().ok()).unwrap();
        assert!(executions >= 2, "the two threads' changes race: {}", out.stdout);
        assert_eq!(contents(&dir), before, "irs verify {extra:?} changed the program's directory");
        assert!(!outside.exists(), "irs verify {extra:?} wrote {}", outside.display());
    }
    // The same program run directly does change it: the test would see a leak.
    let plain = run(Command::new(dir.join("fs_changes")).arg(outside.to_str().unwrap()).current_dir(&dir), None, T).unwrap();
    assert_eq!(plain.how(), "exit 0", "{}", plain.stderr);
    assert_ne!(contents(&dir), before);
    assert!(outside.exists());
    std::fs::remove_file(&outside).unwrap();
}

#[test]
fn signals_reach_no_process_outside() {
    let dir = build("signals");
    let mut sentinel = Command::new("sleep").arg("120").spawn().unwrap();
    let out = verify(&dir, &[], &["./signals", &sentinel.id().to_string()]);
    assert_eq!(out.how(), "exit 0", "{}\n{}", out.stdout, out.stderr);
    assert!(out.stdout.contains("verdict: safe"), "{}", out.stdout);
    assert!(sentinel.try_wait().unwrap().is_none(), "the sentinel was killed by an explored execution");
    sentinel.kill().unwrap();
    sentinel.wait().unwrap();
}

#[test]
fn the_network_outside_is_out_of_reach_and_its_own_loopback_works() {
    let dir = build("network");
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    listener.set_nonblocking(true).unwrap();
    let port = listener.local_addr().unwrap().port().to_string();
    let out = verify(&dir, &[], &["./network", &port]);
    // Exit 3 would be a connection that reached the test; an assertion, a loopback that failed.
    assert_eq!(out.how(), "exit 0", "{}\n{}", out.stdout, out.stderr);
    assert!(out.stdout.contains("verdict: safe"), "{}", out.stdout);
    assert!(listener.accept().is_err(), "an explored execution connected to the test's listener");
}

#[test]
fn process_creation_is_refused_by_name_and_runs_nothing() {
    let dir = build("spawn");
    let marker = std::env::temp_dir().join(format!("irs-sandbox-spawned-{}", std::process::id()));
    let _ = std::fs::remove_file(&marker);
    let out = verify(&dir, &[], &["./spawn", marker.to_str().unwrap()]);
    assert_eq!(out.how(), "exit 2", "{}\n{}", out.stdout, out.stderr);
    assert!(out.stderr.contains("system at spawn.c:"), "the refusal names the call: {}", out.stderr);
    assert!(!marker.exists());
}

#[test]
fn isolation_can_be_turned_off_and_then_writes_really_happen() {
    let dir = build_in("fs_changes", "off");
    lay_out(&dir);
    let outside = std::env::temp_dir().join(format!("irs-sandbox-off-{}", std::process::id()));
    let _ = std::fs::remove_file(&outside);
    let out = run(Command::new(irs()).args(["replay", "--schedule-default", "--", "./fs_changes", outside.to_str().unwrap()]).env("IRS_SANDBOX", "off").current_dir(&dir), None, T).unwrap();
    assert_eq!(out.how(), "exit 0", "{}\n{}", out.stdout, out.stderr);
    assert!(dir.join("made.txt").exists() && outside.exists(), "IRS_SANDBOX=off runs executions for real");
    std::fs::remove_file(&outside).unwrap();
}

#[test]
fn the_verifier_leaves_no_sandbox_directory_behind() {
    let dir = build_in("signals", "leftovers");
    let tmp = scratch("sandbox-tmpdir");
    let out = run(Command::new(irs()).args(["verify", "--", "./signals"]).env("TMPDIR", &tmp).current_dir(&dir), None, T).unwrap();
    assert_eq!(out.how(), "exit 0", "{}\n{}", out.stdout, out.stderr);
    assert_eq!(std::fs::read_dir(&tmp).unwrap().count(), 0, "left in TMPDIR: {:?}", std::fs::read_dir(&tmp).unwrap().map(|e| e.unwrap().path()).collect::<Vec<_>>());
}

#[test]
fn what_a_killed_verifier_left_is_swept_by_the_next() {
    let dir = build_in("signals", "killed");
    std::fs::write(dir.join("long.c"), "#include <pthread.h>\nint x;\nvoid *f(void *a) { for (int i = 0; i < 6; i++) x++; return a; }\nint main(void) { pthread_t t[4]; for (int i = 0; i < 4; i++) pthread_create(&t[i], 0, f, 0); for (int i = 0; i < 4; i++) pthread_join(t[i], 0); return 0; }\n").unwrap();
    irs_cc(&dir, &["long.c", "-o", "long", "-lpthread"]).unwrap();
    let tmp = scratch("sandbox-killed-tmpdir");
    let mut verifier = Command::new(irs()).args(["verify", "--", "./long"]).env("TMPDIR", &tmp).current_dir(&dir)
        .stdout(std::process::Stdio::null()).stderr(std::process::Stdio::null()).spawn().unwrap();
    let leases = || std::fs::read_dir(&tmp).unwrap().flatten().filter(|e| e.file_name().to_string_lossy().ends_with(".lease")).map(|e| e.path()).collect::<Vec<_>>();
    let started = std::time::Instant::now();
    while leases().len() < 2 && started.elapsed() < T {
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    verifier.kill().unwrap();
    verifier.wait().unwrap();
    let left = leases();
    assert!(left.len() >= 2, "the verifier made its sandbox and captures directories, each with a lease: {left:?}");
    // A lease is taken only once a minute old (one just made may not be locked yet).
    for l in &left {
        assert!(Command::new("touch").arg("-d").arg("2 hours ago").arg(l).status().unwrap().success());
    }
    let out = run(Command::new(irs()).args(["verify", "--", "./signals"]).env("TMPDIR", &tmp).current_dir(&dir), None, T).unwrap();
    assert_eq!(out.how(), "exit 0", "{}\n{}", out.stdout, out.stderr);
    assert_eq!(std::fs::read_dir(&tmp).unwrap().count(), 0, "left in TMPDIR: {:?}", std::fs::read_dir(&tmp).unwrap().map(|e| e.unwrap().path()).collect::<Vec<_>>());
}
