//! IRS end to end (issue 6): `irs run` starts the program's background verifier, waits for its
//! first prefix and runs the program under the prefixes it publishes; `irs status` reports it;
//! a verifier killed with -9 leaves its last prefix in force, is reported stale, and its
//! successor reuses the published table and never publishes a larger prefix.

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

/// Removes the program's segment and verifier state, and kills its verifier, when dropped.
struct Cleanup(PathBuf);

impl Drop for Cleanup {
    fn drop(&mut self) {
        let o = run(Command::new(irs()).args(["status", "--json"]).arg(&self.0), None, T);
        if let Some(j) = o.ok().and_then(|o| serde_json::from_str::<serde_json::Value>(o.stdout.trim()).ok()) {
            if let Some(pid) = j["state"]["pid"].as_u64() {
                // SAFETY: killing the verifier this test started.
                unsafe { libc::kill(pid as i32, libc::SIGKILL) };
            }
            let id = j["program_id"].as_str().unwrap_or_default().to_string();
            let _ = std::fs::remove_file(format!("/dev/shm/irs-{id}"));
            let _ = std::fs::remove_file(format!("/dev/shm/irs-{id}.verifier"));
        }
    }
}

fn irs_run(prog: &Path, args: &[&str]) -> Output {
    run(Command::new(irs()).arg("run").args(args).arg("--").arg(prog), None, Duration::from_secs(300)).unwrap()
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
    assert!(o.stderr.contains("started the background verifier"), "{}", o.stderr);
    assert_eq!(o.stderr.matches("exit 0 in").count(), 200, "{}", o.stderr);
    wait_until("the verifier finishes", Duration::from_secs(60), || status(&prog)["status"] == "finished");
    let s = status(&prog);
    assert_eq!(s["state"]["verdict"], "violation", "{s}");
    assert!(s["constraints_in_force"].as_u64().unwrap() > 0, "a buggy program keeps constraints: {s}");
    // A second `irs run` attaches to the finished verification instead of starting another.
    let o = irs_run(&prog, &["--repeat", "3"]);
    assert!(o.stderr.contains("has finished"), "{}", o.stderr);
    let human = run(Command::new(irs()).arg("status").arg(&prog), None, T).unwrap();
    assert!(human.stdout.contains("found: violation assert"), "{}", human.stdout);
}

#[test]
fn a_killed_verifier_is_stale_and_its_successor_only_shrinks_the_prefix() {
    let d = scratch("irs_service/kill");
    // About 3,840 traces: a few seconds of verification.
    let prog = build(&d, "mpat", &repo().join("benchmarks/qpor/mpat.c"), &["-DK=5"]);
    let _c = Cleanup(prog.clone());
    let o = irs_run(&prog, &["--repeat", "1"]);
    assert!(o.status.success(), "{}", o.stderr);
    wait_until("some relaxation", Duration::from_secs(60), || status(&prog)["state"]["published"].as_u64().unwrap_or(0) >= 2);
    let s = status(&prog);
    assert_eq!(s["status"], "running", "too fast to kill: {s}");
    let pid = s["state"]["pid"].as_u64().unwrap();
    // SAFETY: killing the verifier this test started.
    unsafe { libc::kill(pid as i32, libc::SIGKILL) };
    wait_until("the verifier is reported stale", Duration::from_secs(10), || status(&prog)["status"] == "STALE");
    let segment = format!("/dev/shm/irs-{}", status(&prog)["program_id"].as_str().unwrap());
    let before = cutoff_log(&segment);
    let in_force = status(&prog)["constraints_in_force"].as_u64().unwrap();
    // Runs go on under the last prefix; the next `irs run` starts a new verifier.
    let o = irs_run(&prog, &["--repeat", "20", "--chaos"]);
    assert!(o.status.success(), "{}", o.stderr);
    assert!(o.stderr.contains("started the background verifier"), "{}", o.stderr);
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

#[test]
fn status_of_a_program_without_verifier_is_an_error() {
    let d = scratch("irs_service/none");
    std::fs::write(d.join("p.c"), "int main(void) { return 0; }\n").unwrap();
    let prog = build(&d, "p", &d.join("p.c"), &[]);
    let o = run(Command::new(irs()).arg("status").arg(&prog), None, T).unwrap();
    assert_eq!(o.status.code(), Some(2), "{}", o.stdout);
    assert!(o.stderr.contains("no verifier has run"), "{}", o.stderr);
}
