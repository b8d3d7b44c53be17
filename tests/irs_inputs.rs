//! A verification covers the input it explored, and no other (DESIGN §4 "Inputs"). Held-out
//! programs (`tests/programs/inputs/`, written without irs in view) lock around a shared counter or
//! not, depending on an argument, standard input or the environment: after the safe input is
//! verified, runs with the other input never fail under `irs run` (the plain build does), the other
//! input's own verification finds the bug, and `irs status` tells the inputs apart. Serialised runs
//! are deterministic; the faults get one clear line each.

mod common;

use common::*;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

const LONG: Duration = Duration::from_secs(300);

fn build(dir: &Path, name: &str) -> PathBuf {
    let src = repo().join(format!("tests/programs/inputs/{name}.c"));
    irs_cc(dir, &["-O1", "-pthread", "-o", name, &src.display().to_string()]).unwrap();
    dir.join(name)
}

/// Forgets the program's verifications when dropped.
struct Forget(PathBuf);

impl Drop for Forget {
    fn drop(&mut self) {
        let _ = run(Command::new(irs()).arg("forget").arg(&self.0), None, T);
    }
}

fn status(prog: &Path, args: &[&str], stdin: Option<&str>) -> serde_json::Value {
    status_env(prog, args, stdin, &[])
}

fn status_env(prog: &Path, args: &[&str], stdin: Option<&str>, env: &[(&str, &str)]) -> serde_json::Value {
    let o = run(Command::new(irs()).args(["status", "--json"]).arg(prog).args(args).envs(env.iter().copied()), stdin, T).unwrap();
    serde_json::from_str(o.stdout.trim()).unwrap_or_else(|e| panic!("status --json ({e}): {}{}", o.stdout, o.stderr))
}

fn wait_until(what: &str, limit: Duration, mut f: impl FnMut() -> bool) {
    let t = Instant::now();
    while !f() {
        assert!(t.elapsed() < limit, "timed out waiting until {what}");
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// The verifier's state of the status's own input.
fn violations(s: &serde_json::Value) -> usize {
    s["state"]["violations"].as_array().map_or(0, |v| v.len())
}

/// Runs under IRS of the input `unsafe_args` never fail, once `safe_args` was verified; the
/// plain build fails with it; its own verification finds the bug.
fn the_other_input_is_not_covered_by_the_first(name: &str, safe: &[&str], unsafe_: &[&str], stdin_safe: Option<&str>, stdin_unsafe: Option<&str>, env: &[(&str, &str)]) {
    let d = scratch(&format!("irs_inputs/{name}"));
    let prog = build(&d, name);
    let _f = Forget(prog.clone());
    let src = repo().join(format!("tests/programs/inputs/{name}.c"));
    plain_cc(&d, &["-O1", "-pthread", "-o", "plain", &src.display().to_string()]).unwrap();
    let irs_run = |args: &[&str], stdin: Option<&str>, env: &[(&str, &str)], extra: &[&str]| {
        let mut c = Command::new(irs());
        c.arg("run").args(extra).arg("--").arg(&prog).args(args);
        for (k, v) in env {
            c.env(k, v);
        }
        run(&mut c, stdin, LONG).unwrap()
    };
    let (env_safe, env_unsafe): (Vec<(&str, &str)>, Vec<(&str, &str)>) = match env.first() {
        Some((k, _)) => (vec![(k, "careful")], vec![(k, "fast")]),
        None => (vec![], vec![]),
    };
    let o = irs_run(safe, stdin_safe, &env_safe, &["--repeat", "3"]);
    assert!(o.status.success() && o.stdout.matches("counter=6").count() == 3, "{}{}", o.stdout, o.stderr);
    let status_safe = || status_env(&prog, safe, stdin_safe, &env_safe);
    wait_until("the safe input is verified", Duration::from_secs(120), || status_safe()["status"] == "finished");
    let s = status_safe();
    assert_eq!(s["state"]["verdict"], "safe", "{s}");
    // The other input: not covered by the first one's verification.
    let o = irs_run(unsafe_, stdin_unsafe, &env_unsafe, &["--repeat", "40", "--chaos"]);
    assert!(o.status.success(), "a run under IRS failed: {}{}", o.stdout, o.stderr);
    assert_eq!(o.stdout.matches("counter=6").count(), 40, "{}", o.stderr);
    assert!(o.stderr.contains("is not verified yet: queued for verification"), "{}", o.stderr);
    assert!(!o.stderr.contains("verification finished (safe)"), "the safe input's verdict was applied: {}", o.stderr);
    // The plain build fails with it.
    let mut failed = 0;
    for _ in 0..500 {
        if failed > 0 {
            break;
        }
        let mut c = Command::new(d.join("plain"));
        c.args(unsafe_);
        for (k, v) in &env_unsafe {
            c.env(k, v);
        }
        failed += !run(&mut c, stdin_unsafe, T).unwrap().status.success() as usize;
    }
    assert!(failed > 0, "the plain build never failed in 500 runs: the test shows nothing");
    // Its own verification finds the bug; status tells the two inputs apart.
    let status_unsafe = || status_env(&prog, unsafe_, stdin_unsafe, &env_unsafe);
    wait_until("the other input's verification finds the bug", Duration::from_secs(120), || violations(&status_unsafe()) > 0);
    let s = status_unsafe();
    assert_ne!(s["this_input"], status_safe()["this_input"], "{s}");
    assert_eq!(s["inputs"].as_array().unwrap().len(), 2, "{s}");
    let safe_one = s["inputs"].as_array().unwrap().iter().find(|i| i["this"] == false).unwrap().clone();
    assert_eq!(safe_one["state"]["verdict"], "safe", "{s}");
    assert!(s["state"]["verdict"] != "safe", "{s}");
}

#[test]
fn an_argument_selects_the_verification() {
    the_other_input_is_not_covered_by_the_first("mode_arg", &["careful"], &["fast"], None, None, &[]);
}

#[test]
fn standard_input_selects_the_verification() {
    the_other_input_is_not_covered_by_the_first("mode_stdin", &[], &[], Some("careful\n"), Some("fast\n"), &[]);
}

#[test]
fn the_environment_selects_the_verification() {
    the_other_input_is_not_covered_by_the_first("mode_env", &[], &[], None, None, &[("COUNTER_MODE", "")]);
}

#[test]
fn stdin_from_a_file_and_from_a_pipe_is_the_same_input_and_raw_reads_see_it_whole() {
    let d = scratch("irs_inputs/stdin_kinds");
    let prog = build(&d, "mode_read");
    let _f = Forget(prog.clone());
    std::fs::write(d.join("careful.txt"), "careful\n").unwrap();
    let sh = |script: &str| run(Command::new("sh").arg("-c").arg(script).current_dir(&d).env("IRS", irs()), None, LONG).unwrap();
    let from_file = sh("\"$IRS\" run --repeat 2 -- ./mode_read < careful.txt");
    assert!(from_file.status.success() && from_file.stdout.matches("counter=6").count() == 2, "{}{}", from_file.stdout, from_file.stderr);
    let from_pipe = sh("cat careful.txt | \"$IRS\" run --repeat 2 -- ./mode_read");
    assert!(from_pipe.status.success() && from_pipe.stdout.matches("counter=6").count() == 2, "{}{}", from_pipe.stdout, from_pipe.stderr);
    assert!(!from_pipe.stderr.contains("queued"), "the pipe's input is the file's, verified already: {}", from_pipe.stderr);
    let s = sh("\"$IRS\" status --json ./mode_read < careful.txt");
    let s: serde_json::Value = serde_json::from_str(s.stdout.trim()).unwrap();
    assert_eq!(s["inputs"].as_array().unwrap().len(), 1, "{s}");
    assert_eq!(s["inputs"][0]["input"]["stdin"]["Bytes"]["len"], 8, "{s}");
}

#[test]
fn serialised_runs_are_deterministic_and_not_called_verified() {
    let d = scratch("irs_inputs/serial");
    // A binary of its own (another source file name): `the_other_input_is_not_covered_by_the_first`
    // verifies `mode_arg careful` at the same time, and an identical build is the same program
    // (its verifications, found by program id, are shared).
    std::fs::copy(repo().join("tests/programs/inputs/mode_arg.c"), d.join("mode_arg_serial.c")).unwrap();
    irs_cc(&d, &["-O1", "-pthread", "-o", "mode_arg_serial", "mode_arg_serial.c"]).unwrap();
    let prog = d.join("mode_arg_serial");
    let _f = Forget(prog.clone());
    // Serialised from the start by the runtime: the same trace every run.
    let mut shown = Vec::new();
    for i in 0..5 {
        let trace = d.join(format!("s{i}.trace"));
        let o = run(Command::new(&prog).arg("fast").env("IRS_MODE", "enforce").env("IRS_SERIAL", "1").env("IRS_CHAOS", "1").env("IRS_TRACE", &trace), None, T).unwrap();
        assert!(o.status.success() && o.stdout.contains("counter=6"), "{}{}", o.stdout, o.stderr);
        let t = run(Command::new(irs()).args(["trace", "show"]).arg(&trace), None, T).unwrap();
        assert!(t.status.success() && t.stdout.lines().count() > 20, "{}", t.stderr);
        // The events in order: thread, kind, object and site (not the addresses of fresh runs).
        shown.push(t.stdout.lines().map(|l| l.split_whitespace().take(3).collect::<Vec<_>>().join(" ")).collect::<Vec<_>>());
    }
    assert!(shown.windows(2).all(|w| w[0] == w[1]), "serialised runs differ:\n{:?}\n{:?}", shown[0], shown[1]);
    // `irs run --no-wait` on an input nothing covers yet: serialised, and said so.
    let o = run(Command::new(irs()).args(["run", "--no-wait", "--repeat", "5", "--"]).arg(&prog).arg("fast"), None, LONG).unwrap();
    assert!(o.status.success() && o.stdout.matches("counter=6").count() == 5, "{}{}", o.stdout, o.stderr);
    assert!(o.stderr.contains("SERIALISED (not verified)"), "{}", o.stderr);
    assert!(o.stderr.contains("were not verified"), "{}", o.stderr);
    // Reaction stop: not run at all.
    let _ = run(Command::new(irs()).arg("forget").arg(&prog), None, T);
    let o = run(Command::new(irs()).args(["run", "--no-wait", "--divergence", "stop", "--"]).arg(&prog).arg("careful"), None, LONG).unwrap();
    assert_eq!(o.status.code(), Some(2), "{}", o.stderr);
    assert!(o.stderr.contains("not run (reaction stop)") && o.stdout.is_empty(), "{}{}", o.stdout, o.stderr);
}

#[test]
fn inputs_nothing_can_cover_keep_their_data_and_are_reported() {
    let d = scratch("irs_inputs/faults");
    let prog = build(&d, "mode_stdin");
    let _f = Forget(prog.clone());
    // Longer than the capture limit: reported, run serialised, every byte still delivered.
    let o = run(Command::new(irs()).args(["run", "--capture-limit", "3", "--"]).arg(&prog), Some("careful\n"), LONG).unwrap();
    assert!(o.status.success() && o.stdout.contains("counter=6"), "{}{}", o.stdout, o.stderr);
    assert!(o.stderr.contains("no verification can cover this run: standard input is longer than the capture limit"), "{}", o.stderr);
    assert!(o.stderr.contains("SERIALISED"), "{}", o.stderr);
    let o = run(Command::new(irs()).args(["run", "--capture-limit", "3", "--divergence", "stop", "--"]).arg(&prog), Some("careful\n"), LONG).unwrap();
    assert_eq!(o.status.code(), Some(2), "{}", o.stderr);
    assert_eq!(o.stderr.lines().count(), 2, "one line for what, one for the refusal: {}", o.stderr);
    // The input cannot be kept (the store is not a directory): reported, serialised.
    let o = run(Command::new(irs()).args(["run", "--"]).arg(&prog).env("IRS_STORE", "/dev/null/irs"), Some("fast\n"), LONG).unwrap();
    assert!(o.status.success() && o.stdout.contains("counter=6"), "{}{}", o.stdout, o.stderr);
    assert!(o.stderr.contains("the input cannot be kept for verification"), "{}", o.stderr);
    // Two `irs run`s with different inputs at once: one worker verifies both, one after the other.
    let a = {
        let prog = prog.clone();
        std::thread::spawn(move || run(Command::new(irs()).args(["run", "--repeat", "5", "--"]).arg(&prog), Some("careful\n"), LONG).unwrap())
    };
    let b = run(Command::new(irs()).args(["run", "--repeat", "5", "--"]).arg(&prog), Some("fast\n"), LONG).unwrap();
    let a = a.join().unwrap();
    for o in [&a, &b] {
        assert!(o.status.success() && o.stdout.matches("counter=6").count() == 5, "{}{}", o.stdout, o.stderr);
    }
    let s = status(&prog, &[], Some("careful\n"));
    assert_eq!(s["inputs"].as_array().unwrap().len(), 2, "{s}");
    // A captured input is verified by hand with `irs verify --input KEY`.
    let fast = status(&prog, &[], Some("fast\n"))["this_input"].as_str().unwrap().to_string();
    let o = run(Command::new(irs()).args(["verify", "--first-bug", "--out-dir"]).arg(&d).args(["--input", &fast, "--"]).arg(&prog), None, LONG).unwrap();
    assert_eq!(o.status.code(), Some(1), "{}{}", o.stdout, o.stderr);
    assert!(o.stdout.contains("found: violation assert") && o.stdout.contains(&format!("--input {fast} ")), "{}", o.stdout);
    // Its reproduce line replays the bug on the stored input (arguments, stdin, files).
    let line = o.stdout.lines().find(|l| l.trim_start().starts_with("reproduce: irs replay")).expect("a reproduce line");
    let words: Vec<&str> = line.trim_start().trim_start_matches("reproduce: irs ").split_whitespace().collect();
    let r = run(Command::new(irs()).args(&words), None, LONG).unwrap();
    assert_eq!(r.status.code(), Some(1), "{}{}", r.stdout, r.stderr);
    assert!(r.stdout.contains("outcome: violation assert"), "{}", r.stdout);
    let o = run(Command::new(irs()).args(["verify", "--input", "0123456789abcdef", "--"]).arg(&prog), None, T).unwrap();
    assert_eq!(o.status.code(), Some(2), "{}", o.stderr);
    assert!(o.stderr.contains("no input 0123456789abcdef"), "{}", o.stderr);
    // A program whose verification ends without a prefix (a construct it does not model): its
    // runs are serialised with the reason, the first one and every later one, not refused.
    std::fs::write(d.join("cancel.c"), "#include <pthread.h>\n#include <stdio.h>\nvoid *t(void *a) { return a; }\nint main(void) { pthread_t th; pthread_create(&th, 0, t, 0); pthread_cancel(th); pthread_join(th, 0); puts(\"done\"); return 0; }\n").unwrap();
    irs_cc(&d, &["-O1", "-pthread", "-o", "cancel", "cancel.c"]).unwrap();
    let cancel = d.join("cancel");
    let _fc = Forget(cancel.clone());
    for first in [true, false] {
        let o = run(Command::new(irs()).args(["run", "--"]).arg(&cancel), None, LONG).unwrap();
        assert!(o.status.success() && o.stdout.contains("done"), "{}{}", o.stdout, o.stderr);
        assert!(o.stderr.contains("ended without a prefix") && o.stderr.contains("pthread_cancel") && o.stderr.contains("SERIALISED"), "{}", o.stderr);
        // The first run queued the input and waited for its verification; a later one knows.
        assert_eq!(o.stderr.contains("queued"), first, "{}", o.stderr);
    }
    // Forget: nothing left.
    let o = run(Command::new(irs()).arg("forget").arg(&prog), None, T).unwrap();
    assert!(o.status.success() && o.stdout.contains("forgot 2 input(s)"), "{}{}", o.stdout, o.stderr);
    let o = run(Command::new(irs()).arg("status").arg(&prog), None, T).unwrap();
    assert_eq!(o.status.code(), Some(2), "{}", o.stdout);
}

/// A file the program opens is part of its input: after the `careful` config file is verified,
/// runs with the file changed to `fast` are another input (queued, never failing under IRS;
/// the plain build fails), whose own verification finds the bug; the file changed back is the
/// first input again.
#[test]
fn a_file_the_program_opens_selects_the_verification() {
    let d = scratch("irs_inputs/mode_file");
    let prog = build(&d, "mode_file");
    let _f = Forget(prog.clone());
    let src = repo().join("tests/programs/inputs/mode_file.c");
    plain_cc(&d, &["-O1", "-pthread", "-o", "plain", &src.display().to_string()]).unwrap();
    let cfg = d.join("cfg");
    // A relative name, read from the working directory (part of the input).
    let irs_run = |extra: &[&str]| run(Command::new(irs()).arg("run").args(extra).arg("--").arg(&prog).arg("cfg").current_dir(&d), None, LONG).unwrap();
    let status_here = || {
        let o = run(Command::new(irs()).args(["status", "--json"]).arg(&prog).arg("cfg").current_dir(&d), None, T).unwrap();
        serde_json::from_str::<serde_json::Value>(o.stdout.trim()).unwrap_or_else(|e| panic!("status --json ({e}): {}{}", o.stdout, o.stderr))
    };
    std::fs::write(&cfg, "careful\n").unwrap();
    let o = irs_run(&["--repeat", "3"]);
    assert!(o.status.success() && o.stdout.matches("counter=6").count() == 3, "{}{}", o.stdout, o.stderr);
    wait_until("the careful file is verified", Duration::from_secs(120), || status_here()["status"] == "finished");
    let careful = status_here();
    assert_eq!(careful["state"]["verdict"], "safe", "{careful}");
    let this = careful["inputs"].as_array().unwrap().iter().find(|i| i["this"] == true).unwrap().clone();
    let read = this["files_read"].to_string();
    assert!(read.contains(&format!("{} (8 bytes)", cfg.display())), "{careful}");
    assert!(careful["state"]["covers"].as_str().unwrap().contains("cfg (8 bytes)"), "{careful}");

    std::fs::write(&cfg, "fast\n").unwrap();
    let o = irs_run(&["--repeat", "40", "--chaos"]);
    assert!(o.status.success(), "a run under IRS failed: {}{}", o.stdout, o.stderr);
    assert_eq!(o.stdout.matches("counter=6").count(), 40, "{}", o.stderr);
    assert!(o.stderr.contains("is not verified yet: queued for verification"), "{}", o.stderr);
    let mut failed = 0;
    for _ in 0..500 {
        if failed > 0 {
            break;
        }
        failed += !run(Command::new(d.join("plain")).arg("cfg").current_dir(&d), None, T).unwrap().status.success() as usize;
    }
    assert!(failed > 0, "the plain build never failed in 500 runs: the test shows nothing");
    wait_until("the fast file's verification finds the bug", Duration::from_secs(120), || violations(&status_here()) > 0);
    let fast = status_here();
    assert_ne!(fast["this_input"], careful["this_input"], "{fast}");
    let inputs = fast["inputs"].as_array().unwrap();
    assert_eq!(inputs.len(), 2, "{fast}");
    let this = inputs.iter().find(|i| i["this"] == true).unwrap();
    assert_eq!(this["input"]["files"][0]["path"], cfg.display().to_string(), "the file is pinned: {fast}");
    assert_eq!(inputs.iter().find(|i| i["this"] == false).unwrap()["state"]["verdict"], "safe", "{fast}");
    let fast_segment = this["segment"].as_str().unwrap().to_string();

    // Changed back: the first verification covers it again.
    std::fs::write(&cfg, "careful\n").unwrap();
    assert_eq!(status_here()["this_input"], careful["this_input"]);
    let o = irs_run(&["--repeat", "2"]);
    assert!(o.status.success() && o.stdout.matches("counter=6").count() == 2, "{}{}", o.stdout, o.stderr);
    assert!(o.stderr.contains("0 constraints in force") && !o.stderr.contains("queued"), "{}", o.stderr);

    // The runtime's own check, at the open, for a file that changed after `irs run` looked:
    // run by hand under an input's segment and captures with the other file.
    let files_of = |s: &serde_json::Value| s["inputs"].as_array().unwrap().iter().find(|i| i["this"] == true).unwrap()["files_dir"].as_str().unwrap().to_string();
    let (careful_files, fast_files) = (files_of(&careful), files_of(&fast));
    let by_hand = |segment: &str, files: &str, reaction: &str| {
        run(
            Command::new(&prog)
                .arg("cfg")
                .current_dir(&d)
                .env("IRS_MODE", "enforce")
                .env("IRS_PREFIX", segment)
                .env("IRS_DIVERGENCE", reaction)
                .env("IRS_CHAOS", "1")
                .env("IRS_INPUT_FILES", files),
            None,
            T,
        )
        .unwrap()
    };
    // Inside the fast input's prefix (it keeps constraints: it has a bug), a careful file: the
    // rest of the run is serialised.
    let o = by_hand(&fast_segment, &fast_files, "serial");
    assert!(o.status.success() && o.stdout.contains("counter=6"), "{}{}", o.stdout, o.stderr);
    assert!(o.stderr.contains("reads input no verification covers: the file") && o.stderr.contains("holds other bytes") && o.stderr.contains("serialised"), "{}", o.stderr);
    // Under the careful input's empty prefix every thread runs free: a fast file is reported as
    // not verified (it cannot be serialised any more), or stops the run.
    std::fs::write(&cfg, "fast\n").unwrap();
    let careful_segment = careful["segment"].as_str().unwrap().to_string();
    let o = by_hand(&careful_segment, &careful_files, "serial");
    assert!(o.stderr.contains("cannot be serialised: the rest of this run is not verified"), "{}", o.stderr);
    let o = by_hand(&careful_segment, &careful_files, "stop");
    assert!(!o.status.success() && o.stdout.is_empty() && o.stderr.contains("stopping (reaction stop)"), "{}{}", o.stdout, o.stderr);
}

/// What the verification cannot capture is unsupported, by name: a device whose bytes change,
/// and an existing file both read and written. A missing file is part of the input too.
#[test]
fn files_irs_cannot_capture_are_unsupported_by_name() {
    let d = scratch("irs_inputs/uncapturable");
    std::fs::write(
        d.join("rd.c"),
        r#"#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <unistd.h>
int x;
void *t(void *a) { (void)a; x++; return 0; }
int main(int argc, char **argv) {
    int fd = open(argv[1], argc > 2 ? O_RDWR : O_RDONLY);
    char b[8] = {0};
    if (fd >= 0) { if (read(fd, b, 4) < 0) return 3; close(fd); }
    pthread_t th;
    pthread_create(&th, 0, t, 0);
    x++;
    pthread_join(th, 0);
    printf("%d %s %s\n", x, fd >= 0 ? "open" : "absent", b);
    return 0;
}
"#,
    )
    .unwrap();
    irs_cc(&d, &["-O1", "-pthread", "-o", "rd", "rd.c"]).unwrap();
    std::fs::write(d.join("f"), "abc\n").unwrap();
    let verify = |args: &[&str]| run(Command::new(irs()).args(["verify", "--"]).arg(d.join("rd")).args(args).current_dir(&d), None, LONG).unwrap();
    let o = verify(&["/dev/urandom"]);
    assert_eq!(o.status.code(), Some(2), "{}{}", o.stdout, o.stderr);
    assert!(o.stderr.contains("unsupported: open at rd.c:8") && o.stderr.contains("/dev/urandom is not a regular file"), "{}", o.stderr);
    let o = verify(&["f", "rw"]);
    assert_eq!(o.status.code(), Some(2), "{}{}", o.stdout, o.stderr);
    assert!(o.stderr.contains("is opened for reading and writing"), "{}", o.stderr);
    let o = verify(&["f"]);
    assert!(o.status.success() && o.stdout.contains(&format!("{} (4 bytes)", d.join("f").display())), "{}{}", o.stdout, o.stderr);
    let o = verify(&["missing"]);
    assert!(o.status.success() && o.stdout.contains(&format!("{} (absent)", d.join("missing").display())), "{}{}", o.stdout, o.stderr);
}

/// A program that creates more threads than EXPLORE runs is verified under the default thread
/// bound, where every execution is cut, so its verification has no correct execution to anchor
/// a prefix on: it says so as soon as it knows, and `irs run` stops waiting for a prefix then
/// (it waited its whole `--wait-limit` at every run while the bounded exploration went on: the
/// two workers' twenty critical sections each keep it going far longer than the test).
#[test]
fn runs_of_a_program_no_prefix_can_cover_do_not_wait_for_one() {
    let d = scratch("irs_inputs/no_anchor");
    std::fs::write(
        d.join("many.c"),
        "#include <pthread.h>\n#include <stdio.h>\nint n;\npthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;\n\
         void *w(void *a) { for (int k = 0; k < 20; k++) { pthread_mutex_lock(&m); n++; pthread_mutex_unlock(&m); } return a; }\n\
         int main(void) { pthread_t t[100]; for (int i = 0; i < 100; i++) pthread_create(&t[i], 0, w, 0);\n\
         for (int i = 0; i < 100; i++) pthread_join(t[i], 0); printf(\"n=%d\\n\", n); return 0; }\n",
    )
    .unwrap();
    irs_cc(&d, &["-O1", "-pthread", "-o", "many", "many.c"]).unwrap();
    let prog = d.join("many");
    let _f = Forget(prog.clone());
    for _ in 0..2 {
        let started = Instant::now();
        let o = run(Command::new(irs()).args(["run", "--wait-limit", "60", "--"]).arg(&prog), None, LONG).unwrap();
        assert!(o.status.success() && o.stdout == "n=2000\n", "{}{}", o.stdout, o.stderr);
        assert!(o.stderr.contains("ended without a prefix") && o.stderr.contains("thread bound") && o.stderr.contains("SERIALISED"), "{}", o.stderr);
        assert!(started.elapsed() < Duration::from_secs(30), "waited {:?} for a prefix that cannot come:\n{}", started.elapsed(), o.stderr);
    }
}
