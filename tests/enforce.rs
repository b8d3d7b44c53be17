//! ENFORCE end to end (DESIGN §4): real programs, real prefixes, real threads under chaos.

mod common;

use common::*;
use std::process::Command;
use std::time::Duration;

fn irs_in(dir: &std::path::Path, args: &[&str]) -> Output {
    run(Command::new(irs()).args(args).current_dir(dir), None, T).unwrap()
}

const RACE: &str = "#include <assert.h>\n#include <pthread.h>\nint x;\nvoid *t(void *a) { int v = x; x = v + 1; return a; }\nint main(void) { pthread_t a, b; pthread_create(&a, 0, t, 0); pthread_create(&b, 0, t, 0); pthread_join(a, 0); pthread_join(b, 0); assert(x == 2); return 0; }\n";

/// Record runs until one ends with exit 0 (a correct trace to anchor the prefix on).
fn correct_trace(d: &std::path::Path, exe: &str) {
    for _ in 0..100 {
        if irs_in(d, &["record", "--out", "ok.trace", "--", exe]).status.success() {
            return;
        }
    }
    panic!("no correct run of {exe} in 100 tries");
}

#[test]
fn a_prefix_keeps_a_schedule_dependent_bug_out_under_chaos() {
    let d = scratch("enforce/race");
    std::fs::write(d.join("race.c"), RACE).unwrap();
    irs_cc(&d, &["-O1", "-pthread", "-o", "race", "race.c"]).unwrap();
    correct_trace(&d, "./race");
    assert!(irs_in(&d, &["constrain", "--trace", "ok.trace", "--out", "full.prefix"]).status.success());
    // The same chaos without a prefix exposes the bug.
    let mut exposed = false;
    for _ in 0..2000 {
        let o = run(Command::new(d.join("race")).env("IRS_CHAOS", "1"), None, T).unwrap();
        if o.how() == "signal 6" {
            exposed = true;
            break;
        }
    }
    assert!(exposed, "chaos without a prefix never exposed the lost update");
    // Under the prefix: never, in 2,000 runs.
    let prefix = d.join("full.prefix");
    let mut failures = 0;
    for _ in 0..2000 {
        let o = run(Command::new(d.join("race")).env("IRS_PREFIX", &prefix).env("IRS_CHAOS", "1"), None, T).unwrap();
        if !o.status.success() {
            failures += 1;
        }
    }
    assert_eq!(failures, 0, "runs under the prefix violated the assertion");
}

#[test]
fn a_smaller_prefix_is_adopted_mid_run() {
    let d = scratch("enforce/relax");
    // T1 reads g; in the recorded run it did so after main wrote g, late. Under the full prefix
    // T1 waits for that write (main sleeps first); relaxed to nothing, it goes at once.
    std::fs::write(
        d.join("late.c"),
        "#include <pthread.h>\n#include <stdio.h>\n#include <stdlib.h>\n#include <time.h>\n#include <unistd.h>\nint g; int slow_reader;\n\
         static double now(void) { struct timespec t; clock_gettime(CLOCK_MONOTONIC, &t); return t.tv_sec + t.tv_nsec / 1e9; }\n\
         static double start;\n\
         void *reader(void *a) { if (slow_reader) sleep(2); int v = g; printf(\"reader done after %.0f ms (g=%d)\\n\", (now() - start) * 1000, v); fflush(stdout); return a; }\n\
         int main(int argc, char **argv) { start = now(); slow_reader = argc > 1; pthread_t t; pthread_create(&t, 0, reader, 0); usleep(1500000); g = 1; pthread_join(t, 0); return 0; }\n",
    )
    .unwrap();
    irs_cc(&d, &["-O1", "-pthread", "-o", "late", "late.c"]).unwrap();
    assert!(irs_in(&d, &["record", "--out", "late.trace", "--", "./late", "slow"]).status.success());
    assert!(irs_in(&d, &["constrain", "--trace", "late.trace", "--out", "late.prefix"]).status.success());
    let shown = irs_in(&d, &["prefix", "show", "late.prefix"]).stdout;
    assert!(shown.contains("T1#1 load in reader at late.c:9:60  <-  T0#3 store in main at late.c:10:140"), "{shown}");
    assert!(shown.lines().any(|l| l.starts_with("# object index: ") && l.contains(" entries")), "{shown}");
    let ms = |o: &Output| -> f64 {
        o.stdout.split("after ").nth(1).and_then(|r| r.split(' ').next()).and_then(|v| v.parse().ok()).unwrap_or_else(|| panic!("{}{}", o.stdout, o.stderr))
    };
    // Full prefix: the reader waits for main's write.
    let full = irs_in(&d, &["run", "--prefix", "late.prefix", "--", "./late"]);
    assert!(full.status.success(), "{}", full.stderr);
    assert!(ms(&full) >= 1400.0, "{}", full.stdout);
    assert!(full.stdout.contains("g=1"));
    // Relaxed to the empty prefix 300 ms into the run: the reader goes then.
    let child = Command::new(irs()).args(["run", "--prefix", "late.prefix", "--", "./late"]).current_dir(&d).stdout(std::process::Stdio::piped()).spawn().unwrap();
    std::thread::sleep(Duration::from_millis(300));
    assert!(irs_in(&d, &["prefix", "relax", "late.prefix", "--cut", "0,0"]).status.success());
    let out = child.wait_with_output().unwrap();
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    let reader_ms: f64 = text.split("after ").nth(1).and_then(|r| r.split(' ').next()).and_then(|v| v.parse().ok()).unwrap();
    assert!(reader_ms < 1200.0, "the reader should have been released by the relaxation: {text}");
    assert!(text.contains("g=0"), "released early, it reads g before main's write: {text}");
    // A larger cutoff is refused.
    let o = irs_in(&d, &["prefix", "relax", "late.prefix", "--cut", "1,0"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(o.stderr.contains("a prefix only shrinks"), "{}", o.stderr);
    // A published count raised mid-run over a slot irs never wrote: its checksum does not
    // verify, the runtime reports it once and keeps the prefix in force (the reader waits).
    assert!(irs_in(&d, &["constrain", "--trace", "late.trace", "--out", "raised.prefix"]).status.success());
    let child = Command::new(irs())
        .args(["run", "--prefix", "raised.prefix", "--", "./late"])
        .current_dir(&d)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(Duration::from_millis(300));
    {
        use std::io::{Seek, SeekFrom, Write};
        let mut f = std::fs::OpenOptions::new().write(true).open(d.join("raised.prefix")).unwrap();
        f.seek(SeekFrom::Start(shared_proto::prefix_segment::PUBLISHED_OFFSET as u64)).unwrap();
        f.write_all(&2u32.to_le_bytes()).unwrap();
    }
    let out = child.wait_with_output().unwrap();
    let (text, err) = (String::from_utf8_lossy(&out.stdout).into_owned(), String::from_utf8_lossy(&out.stderr).into_owned());
    assert!(out.status.success(), "{text}{err}");
    let reader_ms: f64 = text.split("after ").nth(1).and_then(|r| r.split(' ').next()).and_then(|v| v.parse().ok()).unwrap();
    assert!(reader_ms >= 1400.0 && text.contains("g=1"), "the full prefix stays in force: {text}");
    assert_eq!(err.lines().filter(|l| l.contains("ignoring published cutoff 1") && l.contains("checksum")).count(), 1, "{err}");
}

#[test]
fn divergent_runs_and_bad_prefixes_are_reported() {
    let d = scratch("enforce/diverge");
    std::fs::write(
        d.join("div.c"),
        "#include <pthread.h>\n#include <stdlib.h>\nint g, h, n;\nvoid *t(void *a) { for (int i = 0; i < n; i++) g++; h = 1; return a; }\n\
         int main(int argc, char **argv) { n = atoi(argv[1]); pthread_t x; pthread_create(&x, 0, t, 0); pthread_join(x, 0); return g == n ? 0 : 1; }\n",
    )
    .unwrap();
    std::fs::write(d.join("other.c"), "int g;\nint main(void) { g = 1; return 0; }\n").unwrap();
    irs_cc(&d, &["-O1", "-pthread", "-o", "div", "div.c"]).unwrap();
    irs_cc(&d, &["-o", "other", "other.c"]).unwrap();
    assert!(irs_in(&d, &["record", "--out", "div.trace", "--", "./div", "3"]).status.success());
    assert!(irs_in(&d, &["constrain", "--trace", "div.trace", "--out", "div.prefix"]).status.success());
    // Same input: no report.
    let same = irs_in(&d, &["run", "--prefix", "div.prefix", "--", "./div", "3"]);
    assert!(same.status.success() && same.stderr.is_empty(), "{}", same.stderr);
    // Another input leaves the trace: reported once, the rest serialised (the default), the run
    // completes.
    let other = irs_in(&d, &["run", "--prefix", "div.prefix", "--", "./div", "1"]);
    assert!(other.status.success(), "{}", other.stderr);
    assert_eq!(other.stderr.lines().filter(|l| l.contains("left the verified trace")).count(), 1, "{}", other.stderr);
    assert!(other.stderr.contains("left the verified trace at T1#"), "{}", other.stderr);
    assert!(other.stderr.contains("the rest of this run is serialised"), "{}", other.stderr);
    // Reaction free (asked for): constraints released, said unverified.
    let free = irs_in(&d, &["run", "--prefix", "div.prefix", "--divergence", "free", "--", "./div", "1"]);
    assert!(free.status.success() && free.stderr.contains("releasing every constraint") && free.stderr.contains("not verified"), "{}", free.stderr);
    // Policy stop aborts.
    let stop = irs_in(&d, &["run", "--prefix", "div.prefix", "--divergence", "stop", "--", "./div", "1"]);
    assert_eq!(stop.status.code(), Some(128 + 6), "{}", stop.stderr);
    // A foreign, truncated or other-version prefix is refused with one clear line.
    let b = std::fs::read(d.join("div.prefix")).unwrap();
    std::fs::write(d.join("short.prefix"), &b[..b.len() / 2]).unwrap();
    let mut v = b.clone();
    v[8] = 7;
    std::fs::write(d.join("v7.prefix"), &v).unwrap();
    // One bit of a row's site (the first row, after the 64-byte header and the 16-byte thread
    // records): structurally fine, caught by the table checksum.
    let mut flipped = b.clone();
    let rows_at = 64 + 16 * u32::from_le_bytes(b[12..16].try_into().unwrap()) as usize;
    flipped[rows_at] ^= 0x10;
    std::fs::write(d.join("flipped.prefix"), &flipped).unwrap();
    for (args, needle) in [
        (vec!["run", "--prefix", "div.prefix", "--", "./other"], "belongs to another program"),
        (vec!["run", "--prefix", "short.prefix", "--", "./div", "3"], "corrupt or truncated prefix"),
        (vec!["run", "--prefix", "v7.prefix", "--", "./div", "3"], "format version 7"),
        (vec!["run", "--prefix", "flipped.prefix", "--", "./div", "3"], "table checksum mismatch"),
        (vec!["run", "--prefix", "missing.prefix", "--", "./div", "3"], "cannot open the prefix"),
    ] {
        let o = irs_in(&d, &args);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {}", o.stderr);
        assert_eq!(o.stderr.trim().lines().count(), 1, "{args:?}: {}", o.stderr);
        assert!(o.stderr.contains(needle), "{args:?}: {}", o.stderr);
    }
}

/// A run serialised by a divergence while another thread is already blocked in a real
/// `pthread_join` (past its cut, so free) completes: the joining thread is *away* for the
/// serialisation until its join returns (`enforcer::blocking`). Before, a decision waited for it
/// to park, and it waited for a thread that never got the turn: about every other run hung.
#[test]
fn a_run_serialised_while_a_thread_is_blocked_in_a_join_completes() {
    let d = scratch("enforce/diverge_join");
    std::fs::write(
        d.join("j.c"),
        "#include <pthread.h>\n#include <stdio.h>\n#include <unistd.h>\nint mode, x, y;\npthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;\n\
         void *w(void *a) { usleep(100000); if (mode) x = 1; else y = 1; for (int i = 0; i < 3; i++) { pthread_mutex_lock(&m); x++; pthread_mutex_unlock(&m); } return a; }\n\
         int main(int argc, char **argv) { mode = argc > 1; pthread_t t[2]; for (int i = 0; i < 2; i++) pthread_create(&t[i], 0, w, 0); for (int i = 0; i < 2; i++) pthread_join(t[i], 0); printf(\"done\\n\"); return 0; }\n",
    )
    .unwrap();
    irs_cc(&d, &["-O1", "-pthread", "-o", "j", "j.c"]).unwrap();
    assert!(irs_in(&d, &["record", "--out", "j.trace", "--", "./j"]).status.success());
    // Four constraints: main's joins lie past its cut, a worker's first store inside its own.
    assert!(irs_in(&d, &["constrain", "--trace", "j.trace", "--out", "j.prefix", "--keep", "4"]).status.success());
    for i in 0..10 {
        let o = run(Command::new(d.join("j")).arg("x").env("IRS_PREFIX", d.join("j.prefix")).current_dir(&d), None, Duration::from_secs(20)).unwrap_or_else(|e| panic!("run {i}: {e}"));
        assert!(o.status.success() && o.stdout.trim() == "done", "run {i}: {}\n{}", o.how(), o.stderr);
        assert!(o.stderr.contains("left the verified trace"), "run {i}: {}", o.stderr);
    }
}

#[test]
fn bench_overhead_measures_every_constraint_count() {
    let d = scratch("enforce/bench");
    std::fs::write(
        d.join("w.c"),
        "#include <pthread.h>\n#include <stdio.h>\n#include <time.h>\nint x;\npthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;\n\
         void *t(void *a) { for (int i = 0; i < 5; i++) { pthread_mutex_lock(&m); x++; pthread_mutex_unlock(&m); } return a; }\n\
         int main(void) { struct timespec s, e; clock_gettime(CLOCK_MONOTONIC, &s); pthread_t a, b; pthread_create(&a, 0, t, 0); pthread_create(&b, 0, t, 0); pthread_join(a, 0); pthread_join(b, 0);\n\
         clock_gettime(CLOCK_MONOTONIC, &e); printf(\"work_us=%.1f\\n\", (e.tv_sec - s.tv_sec) * 1e6 + (e.tv_nsec - s.tv_nsec) / 1e3); return 0; }\n",
    )
    .unwrap();
    plain_cc(&d, &["-O2", "-pthread", "-o", "w.plain", "w.c"]).unwrap();
    irs_cc(&d, &["-O2", "-pthread", "-o", "w", "w.c"]).unwrap();
    for policy in ["default", "round-robin"] {
        let o = irs_in(&d, &["bench", "overhead", "--plain", "./w.plain", "--runs", "3", "--policy", policy, "--csv", "o.csv", "--svg", "o.svg", "--", "./w"]);
        assert!(o.status.success(), "{}", o.stderr);
        assert!(o.stdout.contains(&format!("### w ({policy} first trace")), "{}", o.stdout);
        let rows: Vec<&str> = o.stdout.lines().filter(|l| l.starts_with("| ") && !l.starts_with("| constraints") && !l.starts_with("| plain")).collect();
        assert!(rows.len() >= 2 && rows.last().unwrap().starts_with("| 0 | 0,0,0 |"), "from all constraints down to none: {}", o.stdout);
    }
    let csv = std::fs::read_to_string(d.join("o.csv")).unwrap();
    assert!(csv.starts_with("program,policy,constraints") && csv.contains("w,round-robin,0,"), "{csv}");
    let svg = std::fs::read_to_string(d.join("o.svg")).unwrap();
    assert_eq!(svg.matches("<polyline").count(), 2, "one line per program and policy");
    // The round-robin trace has more constraints than the default one.
    let max = |p: &str| csv.lines().filter(|l| l.starts_with(&format!("w,{p},"))).map(|l| l.split(',').nth(2).unwrap().parse::<u32>().unwrap()).max().unwrap();
    assert!(max("round-robin") > max("default"), "{csv}");
}

/// Dekker's first run under either policy halts a thread in a spin-wait (no first trace); the
/// run with its loops iterating, their read-only iterations left out, is a complete one.
#[test]
fn bench_overhead_takes_a_first_trace_in_which_no_thread_halts_in_a_spin_wait() {
    let d = scratch("enforce/bench_spin");
    let src = repo().join("benchmarks/irs_paper/dekker.c");
    plain_cc(&d, &["-O2", "-pthread", "-o", "dekker.plain", src.to_str().unwrap()]).unwrap();
    irs_cc(&d, &["-O2", "-pthread", "-o", "dekker", src.to_str().unwrap()]).unwrap();
    for policy in ["default", "round-robin"] {
        let o = irs_in(&d, &["bench", "overhead", "--plain", "./dekker.plain", "--runs", "2", "--points", "2", "--policy", policy, "--", "./dekker"]);
        assert!(o.status.success(), "{policy}: {}", o.stderr);
        assert!(o.stdout.contains(&format!("### dekker ({policy} first trace")), "{}", o.stdout);
    }
}

#[test]
fn prefixes_installed_as_shared_memory_segments() {
    let d = scratch("enforce/installed");
    std::fs::write(d.join("race.c"), RACE).unwrap();
    std::fs::write(d.join("other.c"), "int g;\nint main(void) { g = 1; return 0; }\n").unwrap();
    irs_cc(&d, &["-O1", "-pthread", "-o", "race", "race.c"]).unwrap();
    irs_cc(&d, &["-o", "other", "other.c"]).unwrap();
    correct_trace(&d, "./race");
    assert!(irs_in(&d, &["constrain", "--trace", "ok.trace", "--out", "race.prefix"]).status.success());
    assert!(irs_in(&d, &["record", "--out", "other.trace", "--", "./other"]).status.success());
    assert!(irs_in(&d, &["constrain", "--trace", "other.trace", "--out", "other.prefix"]).status.success());
    let none = irs_in(&d, &["run", "--installed", "--", "./race"]);
    assert_eq!(none.status.code(), Some(2));
    assert!(none.stderr.contains("no prefix installed for this program"), "{}", none.stderr);
    let inst = irs_in(&d, &["prefix", "install", "race.prefix"]);
    assert!(inst.status.success(), "{}", inst.stderr);
    let seg = inst.stdout.trim().rsplit(' ').next().unwrap().to_string();
    assert!(seg.starts_with("/dev/shm/irs-"), "{seg}");
    use std::os::unix::fs::PermissionsExt;
    assert_eq!(std::fs::metadata(&seg).unwrap().permissions().mode() & 0o777, 0o600);
    for _ in 0..50 {
        let o = irs_in(&d, &["run", "--installed", "--chaos", "--", "./race"]);
        assert!(o.status.success(), "{}", o.stderr);
    }
    // Another program's prefix under this program's name, or a segment others may write: refused.
    std::fs::copy(d.join("other.prefix"), &seg).unwrap();
    let foreign = irs_in(&d, &["run", "--installed", "--", "./race"]);
    assert!(foreign.stderr.contains("belongs to another program"), "{}", foreign.stderr);
    std::fs::copy(d.join("race.prefix"), &seg).unwrap();
    std::fs::set_permissions(&seg, std::fs::Permissions::from_mode(0o666)).unwrap();
    let open = irs_in(&d, &["run", "--installed", "--", "./race"]);
    assert!(open.stderr.contains("not a prefix segment of this user"), "{}", open.stderr);
    std::fs::remove_file(&seg).unwrap();
}

/// Every run under a prefix, recorded alongside, keeps its histories (rule 1, and nothing past
/// the cut before a prefix event it depends on), under chaos, for the full prefix and a partial
/// one; the same check fails on runs without the prefix.
#[test]
fn recorded_runs_respect_the_prefix() {
    use shared_proto::prefix_segment::PrefixView;
    let d = scratch("enforce/respect");
    std::fs::write(d.join("race.c"), RACE).unwrap();
    irs_cc(&d, &["-O1", "-pthread", "-o", "race", "race.c"]).unwrap();
    correct_trace(&d, "./race");
    let trace_path = d.join("run.trace");
    for (name, keep) in [("full", None), ("part", Some("3"))] {
        let mut args = vec!["constrain", "--trace", "ok.trace", "--out"];
        let file = format!("{name}.prefix");
        args.push(&file);
        if let Some(k) = keep {
            args.extend(["--keep", k]);
        }
        assert!(irs_in(&d, &args).status.success());
        let bytes = std::fs::read(d.join(&file)).unwrap();
        let view = PrefixView::parse(&bytes, None).unwrap();
        let cut = view.cutoff(0);
        for i in 0..300 {
            let o = run(Command::new(d.join("race")).env("IRS_PREFIX", d.join(&file)).env("IRS_CHAOS", "1").env("IRS_TRACE", &trace_path), None, T).unwrap();
            let t = shared_proto::Trace::read(&trace_path).unwrap();
            if let Err(e) = shared_proto::prefix_check::check_histories(&t, &view, &cut, Default::default()) {
                panic!("{name} prefix, run {i}: {e}\n{}", irs::trace_view::table(&t));
            }
            if name == "full" {
                assert!(o.status.success(), "{}", o.stderr);
            }
        }
    }
    // The check is not vacuous: runs without the prefix break it.
    let bytes = std::fs::read(d.join("full.prefix")).unwrap();
    let view = PrefixView::parse(&bytes, None).unwrap();
    let cut = view.cutoff(0);
    let broken = (0..300).any(|_| {
        let _ = run(Command::new(d.join("race")).env("IRS_CHAOS", "1").env("IRS_MODE", "record").env("IRS_TRACE", &trace_path), None, T).unwrap();
        let t = shared_proto::Trace::read(&trace_path).unwrap();
        shared_proto::prefix_check::check_histories(&t, &view, &cut, Default::default()).is_err()
    });
    assert!(broken, "300 unconstrained runs all happened to respect the prefix");
}
