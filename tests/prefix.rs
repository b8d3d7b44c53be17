//! Admissible prefixes from real traces (DESIGN §4; IRS paper §3.2): `irs constrain` and `irs
//! prefix show` on recorded runs of real instrumented programs.

mod common;

use common::*;
use std::process::Command;

fn irs_in(dir: &std::path::Path, args: &[&str]) -> Output {
    run(Command::new(irs()).args(args).current_dir(dir), None, T).unwrap()
}

#[test]
fn constraints_of_a_recorded_run() {
    let d = scratch("prefix/basic");
    std::fs::write(
        d.join("p.c"),
        "#include <pthread.h>\nint g, h;\npthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;\n\
         void *t(void *a) { pthread_mutex_lock(&m); g = 1; pthread_mutex_unlock(&m); return a; }\n\
         int main(void) {\n  pthread_t x;\n  h = 2;\n  pthread_create(&x, 0, t, 0);\n  pthread_mutex_lock(&m);\n  g = 2;\n  pthread_mutex_unlock(&m);\n  pthread_join(x, 0);\n  return 0;\n}\n",
    )
    .unwrap();
    irs_cc(&d, &["-O1", "-g", "-pthread", "-o", "p", "p.c"]).unwrap();
    // Record until main takes the mutex first (T1 then waits for main's unlock): one edge per
    // mutex hand-over, T1's start after its creation, the join after T1's exit.
    let mut shown = String::new();
    for _ in 0..50 {
        assert!(irs_in(&d, &["record", "--out", "p.trace", "--", "./p"]).status.success());
        let out = irs_in(&d, &["constrain", "--trace", "p.trace", "--out", "p.prefix"]);
        assert!(out.status.success(), "{}", out.stderr);
        shown = irs_in(&d, &["prefix", "show", "p.prefix"]).stdout;
        if shown.contains("T1#0 lock in t at p.c:4") && shown.contains("<-  T0#") && shown.contains("T1#0 lock in t at p.c:4:20  <-  T0#4 unlock in main at p.c:11:3") {
            break;
        }
    }
    let edges: Vec<&str> = shown.lines().filter(|l| !l.starts_with('#')).collect();
    assert!(
        edges.contains(&"T1#0 lock in t at p.c:4:20  <-  T0#4 unlock in main at p.c:11:3"),
        "T1's lock waits for main's unlock (which also implies its creation):\n{shown}"
    );
    assert!(edges.iter().any(|e| e.starts_with("T0#5 join in main at p.c:12:3  <-  T1#") && e.ends_with("(thread exit)")), "{shown}");
    assert_eq!(edges.len(), 2, "the creation edge is implied by the lock edge:\n{shown}");
    assert!(shown.contains("2 constraints in force (the whole trace has 2)"), "{shown}");

    // --keep and --cut.
    let out = irs_in(&d, &["constrain", "--trace", "p.trace", "--out", "p0.prefix", "--keep", "0"]);
    assert!(out.stdout.contains("cutoff 0,0 over 2 threads, 0 of 2 constraints"), "{}", out.stdout);
    let out = irs_in(&d, &["constrain", "--trace", "p.trace", "--out", "c.prefix", "--cut", "1,0"]);
    assert!(out.status.success() && out.stdout.contains("cutoff 1,0"), "{}{}", out.stdout, out.stderr);
}

#[test]
fn bad_input_to_constrain_and_prefix_show() {
    let d = scratch("prefix/bad");
    std::fs::write(d.join("a.c"), "#include <assert.h>\nint g;\nint main(void) { g = 1; assert(g == 2); return 0; }\n").unwrap();
    std::fs::write(d.join("ok.c"), "#include <pthread.h>\nint g;\nvoid *t(void *a) { g = 1; return a; }\nint main(void) { pthread_t x; pthread_create(&x, 0, t, 0); pthread_join(x, 0); return 0; }\n").unwrap();
    irs_cc(&d, &["-o", "a", "a.c"]).unwrap();
    irs_cc(&d, &["-pthread", "-o", "ok", "ok.c"]).unwrap();
    irs_in(&d, &["record", "--out", "a.trace", "--", "./a"]);
    assert!(irs_in(&d, &["record", "--out", "ok.trace", "--", "./ok"]).status.success());
    for (args, needle) in [
        (vec!["constrain", "--trace", "a.trace", "--out", "x"], "not of a complete run (violation assert"),
        (vec!["constrain", "--trace", "missing.trace", "--out", "x"], "cannot read trace"),
        (vec!["constrain", "--trace", "ok.trace", "--out", "x", "--cut", "1,x"], "`x` is not an event count"),
        (vec!["constrain", "--trace", "ok.trace", "--out", "x", "--cut", "1"], "1 entries for 2 threads"),
        (vec!["constrain", "--trace", "ok.trace", "--out", "x", "--cut", "0,1"], "not downward closed"),
        (vec!["constrain", "--trace", "ok.trace", "--out", "x", "--cut", "99,0"], "T0 has"),
        (vec!["constrain", "--trace", "ok.trace", "--out", "/nonexistent/x"], "cannot write /nonexistent/x"),
        (vec!["prefix", "show", "ok.trace"], "not an irs prefix"),
        (vec!["prefix", "show", "missing"], "cannot read"),
    ] {
        let out = irs_in(&d, &args);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {}", out.stderr);
        assert_eq!(out.stderr.trim().lines().count(), 1, "{args:?}: {}", out.stderr);
        assert!(out.stderr.contains(needle), "{args:?}: expected {needle:?} in {}", out.stderr);
    }
    // Truncated prefix files are rejected.
    assert!(irs_in(&d, &["constrain", "--trace", "ok.trace", "--out", "ok.prefix"]).status.success());
    let b = std::fs::read(d.join("ok.prefix")).unwrap();
    std::fs::write(d.join("short.prefix"), &b[..b.len() - 3]).unwrap();
    let out = irs_in(&d, &["prefix", "show", "short.prefix"]);
    assert!(out.stderr.contains("corrupt or truncated prefix"), "{}", out.stderr);
}
