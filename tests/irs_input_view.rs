//! What a program sees under `irs run`, and what its input is (docs/src/inputs.md): `fstat`,
//! `lseek` and `isatty` on standard input and on a file it reads answer as for the plain build
//! (a pipe is a pipe, a file has its own times), also once its verification serves both from
//! captures; the environment is input only for the variables the program reads, so `irs
//! status` from the same shell finds the input `irs run` used (bash's `_` and a variable the
//! program never reads make no other input), while a program that reads `environ` keys on the
//! whole environment and `irs status` says so; `--wait-limit 0` does not wait.

mod common;

use common::*;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

const LONG: Duration = Duration::from_secs(300);

/// `sh -c script` in `dir`, with `$IRS` and a store of its own.
fn sh(dir: &Path, script: &str, env: &[(&str, &str)]) -> Output {
    let mut c = Command::new("sh");
    c.arg("-c").arg(script).current_dir(dir).env("IRS", irs()).env("IRS_STORE", dir.join("store"));
    for (k, v) in env {
        c.env(k, v);
    }
    run(&mut c, None, LONG).unwrap()
}

fn status(dir: &Path, script: &str, env: &[(&str, &str)]) -> serde_json::Value {
    let o = sh(dir, script, env);
    serde_json::from_str(o.stdout.trim()).unwrap_or_else(|e| panic!("status --json ({e}): {}{}", o.stdout, o.stderr))
}

fn wait_until(what: &str, mut f: impl FnMut() -> bool) {
    let t = Instant::now();
    while !f() {
        assert!(t.elapsed() < Duration::from_secs(120), "timed out waiting until {what}");
        std::thread::sleep(Duration::from_millis(100));
    }
}

fn build(dir: &Path, name: &str) -> PathBuf {
    let src = repo().join(format!("tests/programs/inputs/{name}.c"));
    irs_cc(dir, &["-O1", "-pthread", "-o", name, &src.display().to_string()]).unwrap();
    dir.join(name)
}

#[test]
fn a_program_sees_its_stdin_and_files_as_the_plain_build_does() {
    let d = scratch("irs_input_view/sees");
    build(&d, "what_it_sees");
    let src = repo().join("tests/programs/inputs/what_it_sees.c");
    plain_cc(&d, &["-O1", "-o", "plain", &src.display().to_string()]).unwrap();
    std::fs::write(d.join("in.txt"), "careful\n").unwrap();
    std::fs::write(d.join("cfg.txt"), "config\n").unwrap();
    let o = sh(&d, "touch -d '2001-02-03 04:05:06.123456789' in.txt cfg.txt && chmod 640 in.txt cfg.txt", &[]);
    assert!(o.status.success(), "{}", o.stderr);
    let kinds = [("file", "< in.txt"), ("pipe", "cat in.txt |"), ("null", "< /dev/null")];
    let compare = |round: &str| {
        for (kind, redirect) in kinds {
            let (pre, post) = if redirect.ends_with('|') { (redirect, "") } else { ("", redirect) };
            let plain = sh(&d, &format!("{pre} ./plain cfg.txt {post}"), &[]);
            let under = sh(&d, &format!("{pre} \"$IRS\" run -- ./what_it_sees cfg.txt {post}"), &[]);
            assert!(plain.status.success() && under.status.success(), "{round} {kind}: {}{}", under.stdout, under.stderr);
            assert_eq!(plain.stdout, under.stdout, "{round}, stdin a {kind}: the program sees something else under irs run ({})", under.stderr);
        }
    };
    compare("before any verification");
    // Once verified, both are served from the verification's captures.
    wait_until("the file input is verified", || status(&d, "\"$IRS\" status --json ./what_it_sees cfg.txt < in.txt", &[])["status"] == "finished");
    wait_until("the empty input is verified", || status(&d, "\"$IRS\" status --json ./what_it_sees cfg.txt < /dev/null", &[])["status"] == "finished");
    let o = sh(&d, "\"$IRS\" run -- ./what_it_sees cfg.txt < in.txt", &[]);
    assert!(o.stderr.contains("constraints in force"), "not a verified run: {}", o.stderr);
    assert!(o.stdout.contains("stdin: file isatty=0 lseek_end=8(ok) size=8 mode=640") && o.stdout.contains("mtime=981173106.123456789 read=8:careful"), "{}", o.stdout);
    assert!(o.stdout.contains("file: file isatty=0 lseek_end=7(ok) size=7 mode=640") && o.stdout.contains("read=7:config"), "{}", o.stdout);
    let o = sh(&d, "cat in.txt | \"$IRS\" run -- ./what_it_sees cfg.txt", &[]);
    assert!(o.stdout.contains("stdin: fifo isatty=0 lseek_end=-1(Illegal seek) read=8:careful"), "{}{}", o.stdout, o.stderr);
    compare("verified");
    let _ = sh(&d, "\"$IRS\" forget ./what_it_sees", &[]);
}

#[test]
fn status_finds_the_input_run_used_whatever_variables_the_program_does_not_read() {
    let d = scratch("irs_input_view/env");
    build(&d, "mode_env");
    let first = [("_", "/usr/bin/irs-one"), ("COUNTER_MODE", "careful")];
    let o = sh(&d, "\"$IRS\" run -- ./mode_env", &first);
    assert!(o.status.success() && o.stdout.contains("counter=6"), "{}{}", o.stdout, o.stderr);
    let st = |env: &[(&str, &str)]| status(&d, "\"$IRS\" status --json ./mode_env", env);
    wait_until("the input is verified", || st(&first)["status"] == "finished");
    // Another `_` and a variable the program never reads: the same input.
    let other_shell = [("_", "/usr/bin/irs-two"), ("UNREAD_BY_THE_PROGRAM", "1"), ("COUNTER_MODE", "careful")];
    let s = st(&other_shell);
    assert_eq!(s["status"], "finished", "{s}");
    assert_eq!(s["inputs"].as_array().unwrap().len(), 1, "{s}");
    assert_eq!(s["inputs"][0]["env_read"], serde_json::json!(["COUNTER_MODE=\"careful\""]), "{s}");
    let o = sh(&d, "\"$IRS\" run -- ./mode_env", &other_shell);
    assert!(o.stderr.contains("verification finished (safe)") && !o.stderr.contains("queued"), "{}", o.stderr);
    let text = sh(&d, "\"$IRS\" status ./mode_env", &other_shell).stdout;
    assert!(text.contains("(this command's input)") && text.contains("environment variables its verification read: COUNTER_MODE=\"careful\""), "{text}");
    // A variable it reads is input: another value is another input.
    let s = st(&[("COUNTER_MODE", "fast")]);
    assert_eq!(s["status"], "none", "{s}");
    let text = sh(&d, "\"$IRS\" status ./mode_env", &[("COUNTER_MODE", "fast")]).stdout;
    assert!(text.contains("has not been seen"), "{text}");
    // `--env all` keys on every variable, as before.
    let s = status(&d, "\"$IRS\" status --json --env all ./mode_env", &other_shell);
    assert_eq!(s["status"], "none", "{s}");
    let _ = sh(&d, "\"$IRS\" forget ./mode_env", &[]);
}

#[test]
fn a_program_that_reads_environ_keys_on_the_whole_environment() {
    let d = scratch("irs_input_view/environ");
    std::fs::write(
        d.join("whole.c"),
        "#include <stdio.h>\nextern char **environ;\nint main(void) { int n = 0; for (char **e = environ; *e; e++) n++; printf(\"%d\\n\", n > 0); return 0; }\n",
    )
    .unwrap();
    irs_cc(&d, &["-O1", "-o", "whole", "whole.c"]).unwrap();
    let one = [("_", "/usr/bin/irs-one")];
    let o = sh(&d, "\"$IRS\" run -- ./whole", &one);
    assert!(o.status.success(), "{}", o.stderr);
    wait_until("the input is verified", || status(&d, "\"$IRS\" status --json ./whole", &one)["status"] == "finished");
    let s = status(&d, "\"$IRS\" status --json ./whole", &one);
    assert_eq!(s["inputs"][0]["env_whole"], true, "{s}");
    let text = sh(&d, "\"$IRS\" status ./whole", &[("_", "/usr/bin/irs-two")]).stdout;
    assert!(text.contains("has not been seen") && text.contains("reads its environment whole"), "{text}");
    let _ = sh(&d, "\"$IRS\" forget ./whole", &[]);
}

#[test]
fn wait_limit_zero_does_not_wait_and_a_negative_one_is_refused() {
    let d = scratch("irs_input_view/wait_limit");
    build(&d, "mode_env");
    let o = sh(&d, "\"$IRS\" run --wait-limit 0 -- ./mode_env", &[("COUNTER_MODE", "careful")]);
    assert!(o.status.success() && o.stdout.contains("counter=6"), "{}{}", o.stdout, o.stderr);
    assert!(o.stderr.contains("queued for verification") && !o.stderr.contains("waiting for its first prefix"), "{}", o.stderr);
    assert!(o.stderr.contains("SERIALISED"), "{}", o.stderr);
    // A limit that runs out before the first prefix: the run still runs (serialised, not
    // verified), as the plain program would, and says why.
    let o = sh(&d, "\"$IRS\" forget ./mode_env >/dev/null; \"$IRS\" run --wait-limit 0.001 -- ./mode_env", &[("COUNTER_MODE", "careful")]);
    assert!(o.status.success() && o.stdout.contains("counter=6"), "{}{}", o.stdout, o.stderr);
    assert!(o.stderr.contains("within 0.001 s") && o.stderr.contains("SERIALISED"), "{}", o.stderr);
    let o = sh(&d, "\"$IRS\" run --wait-limit=-1 -- ./mode_env", &[]);
    assert!(!o.status.success() && o.stderr.contains("must be non-negative"), "{}", o.stderr);
    let _ = sh(&d, "\"$IRS\" forget ./mode_env", &[]);
}

/// A segment outlives the store that made it (a store deleted by hand, a run killed before
/// `irs forget`): a store made again at the same path has verified nothing, and its runs wait
/// for their own verification instead of taking the old segment's prefix.
#[test]
fn a_store_made_again_does_not_take_the_old_stores_prefix() {
    let d = scratch("irs_input_view/store_again");
    build(&d, "mode_env");
    let env = [("COUNTER_MODE", "careful")];
    let o = sh(&d, "\"$IRS\" run --wait-limit 60 -- ./mode_env", &env);
    assert!(o.status.success() && o.stdout.contains("counter=6") && o.stderr.contains("constraints in force"), "{}{}", o.stdout, o.stderr);
    // The verification ends (nothing writes to the store any more), then the store goes.
    let mut old = String::new();
    wait_until("the verification's end", || {
        let s = status(&d, "\"$IRS\" status --json ./mode_env", &env);
        old = s["inputs"][0]["segment"].as_str().unwrap_or_default().to_string();
        s["inputs"][0]["status"] == "finished"
    });
    assert!(Path::new(&old).exists(), "{old}");
    std::fs::remove_dir_all(d.join("store")).unwrap();
    let o = sh(&d, "\"$IRS\" run --wait-limit 0 -- ./mode_env", &env);
    assert!(o.status.success() && o.stdout.contains("counter=6"), "{}{}", o.stdout, o.stderr);
    assert!(o.stderr.contains("queued for verification") && o.stderr.contains("SERIALISED") && !o.stderr.contains("constraints in force"), "{}", o.stderr);
    let _ = sh(&d, "\"$IRS\" forget ./mode_env", &[]);
    let _ = std::fs::remove_file(&old);
}

#[test]
fn the_program_id_read_from_the_binary_is_the_one_its_runtime_says() {
    let d = scratch("irs_input_view/program_id");
    // Two modules, one of them without threads: every record counts, in order.
    std::fs::write(d.join("a.c"), "int helper(int x) { return x + 1; }\n").unwrap();
    std::fs::write(d.join("b.c"), "#include <stdio.h>\nint helper(int);\nint main(void) { printf(\"%d\\n\", helper(1)); return 0; }\n").unwrap();
    irs_cc(&d, &["-O1", "-o", "two", "a.c", "b.c"]).unwrap();
    let prog = d.join("two");
    let from_file = irs_service::instrumented_binary::program_id(&prog).unwrap();
    let ex = irs::replay::executor(&prog.display().to_string(), &[], Default::default()).unwrap();
    assert_eq!(from_file, ex.hello().program_id);
    assert_eq!(irs::service::program_id(&prog.display().to_string(), &[]).unwrap(), from_file);
}
