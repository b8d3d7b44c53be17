//! `irs verify --publish` (DESIGN §6, publishing): the verifier installs the requirement table of
//! its first execution as the program's segment and appends ever smaller cutoffs as nodes of the
//! leftmost branch return with no bug below them; programs running under the segment (ENFORCE)
//! with chaos never hit a bug the verifier found, while the same chaos without it does.

mod common;

use common::*;
use std::path::{Path, PathBuf};
use std::process::Command;

fn build(dir: &Path, name: &str, src: &str) -> PathBuf {
    std::fs::write(dir.join(format!("{name}.c")), src).unwrap();
    irs_cc(dir, &["-O1", "-o", name, &format!("{name}.c")]).unwrap();
    dir.join(name)
}

/// `irs verify --publish --json` (anchored on the default schedule, unless `publish_with` says
/// otherwise): the JSON, and the segment it wrote (removed when dropped).
struct Published {
    json: serde_json::Value,
    segment: PathBuf,
}

impl Drop for Published {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.segment);
        let mut kept = self.segment.clone().into_os_string();
        kept.push(".anchor");
        let _ = std::fs::remove_file(kept);
    }
}

fn publish(dir: &Path, prog: &Path) -> Published {
    publish_with(dir, prog, &["--anchor", "default"])
}

/// `publish` with more arguments for `irs verify`.
fn publish_with(dir: &Path, prog: &Path, more: &[&str]) -> Published {
    let o = run(Command::new(irs()).args(["verify", "--publish", "--json"]).args(more).arg("--out-dir").arg(dir).arg("--").arg(prog).current_dir(dir), None, T).unwrap();
    let json: serde_json::Value = serde_json::from_str(o.stdout.lines().last().unwrap_or_default())
        .unwrap_or_else(|e| panic!("no JSON ({e}): {}\n{}", o.stdout, o.stderr));
    let segment = PathBuf::from(json["published"]["segment"].as_str().unwrap_or_else(|| panic!("nothing published: {json}")));
    assert!(segment.exists(), "{}", segment.display());
    Published { json, segment }
}

/// The published cutoffs: each no larger than the one before, constraints never rising.
fn cuts(p: &Published) -> Vec<Vec<u64>> {
    let log = p.json["published"]["log"].as_array().unwrap();
    let cuts: Vec<Vec<u64>> = log.iter().map(|s| s["cut"].as_array().unwrap().iter().map(|c| c.as_u64().unwrap()).collect()).collect();
    for w in cuts.windows(2) {
        assert!(w[1].iter().zip(&w[0]).all(|(a, b)| a <= b), "cutoffs must shrink: {:?} then {:?}", w[0], w[1]);
    }
    for w in log.windows(2) {
        assert!(w[1]["constraints"].as_u64() <= w[0]["constraints"].as_u64(), "{}", p.json);
    }
    cuts
}

/// How many of `n` chaos runs fail, with the installed prefix or without any.
fn chaos_failures(prog: &Path, n: usize, installed: bool) -> usize {
    (0..n)
        .filter(|_| {
            let mut cmd = if installed {
                let mut c = Command::new(irs());
                c.args(["run", "--installed", "--chaos", "--"]).arg(prog);
                c
            } else {
                let mut c = Command::new(prog);
                c.env("IRS_CHAOS", "1");
                c
            };
            !run(&mut cmd, None, T).unwrap().status.success()
        })
        .count()
}

const RACE: &str = r#"
#include <assert.h>
#include <pthread.h>
int x;
void *t(void *a) { int r = x; x = r + 1; return 0; }
int main(void) {
  pthread_t a, b;
  pthread_create(&a, 0, t, 0); pthread_create(&b, 0, t, 0);
  pthread_join(a, 0); pthread_join(b, 0);
  assert(x == 2);
  return 0;
}
"#;

#[test]
fn a_safe_program_ends_with_the_empty_prefix() {
    let d = scratch("publish/safe");
    let prog = build(
        &d,
        "locked",
        r#"
#include <assert.h>
#include <pthread.h>
pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
int x;
void *t(void *a) { pthread_mutex_lock(&m); int r = x; x = r + 1; pthread_mutex_unlock(&m); return 0; }
int main(void) {
  pthread_t a[3];
  for (int i = 0; i < 3; i++) pthread_create(&a[i], 0, t, 0);
  for (int i = 0; i < 3; i++) pthread_join(a[i], 0);
  assert(x == 3);
  return 0;
}
"#,
    );
    let p = publish(&d, &prog);
    assert_eq!(p.json["verdict"], "safe", "{}", p.json);
    let cuts = cuts(&p);
    assert!(cuts.len() >= 3, "several relaxations: {}", p.json);
    assert!(cuts.last().unwrap().iter().all(|&c| c == 0), "the final prefix is empty: {}", p.json);
    assert!(cuts[0].iter().any(|&c| c > 0));
    let show = run(Command::new(irs()).args(["prefix", "show"]).arg(&p.segment), None, T).unwrap();
    assert!(show.stdout.contains("0 constraints in force"), "{}", show.stdout);
}

#[test]
fn a_found_bug_is_never_published_away() {
    let d = scratch("publish/race");
    let prog = build(&d, "race", RACE);
    let p = publish(&d, &prog);
    assert_eq!(p.json["verdict"], "violation", "{}", p.json);
    let cuts = cuts(&p);
    assert!(cuts.last().unwrap().iter().any(|&c| c > 0), "a buggy program keeps a prefix: {}", p.json);
    assert_eq!(chaos_failures(&prog, 300, true), 0, "a run under the published prefix hit the bug");
    assert!(chaos_failures(&prog, 300, false) > 0, "chaos alone should expose the lost update");
}

#[test]
fn a_failing_default_schedule_is_not_the_anchor() {
    let d = scratch("publish/anchor");
    // The default policy keeps running main, which reads x before T1 writes it: a violation.
    let prog = build(
        &d,
        "anchor",
        r#"
#include <assert.h>
#include <pthread.h>
int x;
void *t(void *a) { x = 1; return 0; }
int main(void) {
  pthread_t a;
  pthread_create(&a, 0, t, 0);
  int r = x;
  pthread_join(a, 0);
  assert(r == 1);
  return 0;
}
"#,
    );
    let o = run(Command::new(irs()).args(["verify", "--publish", "--anchor", "default", "--out-dir"]).arg(&d).arg("--").arg(&prog), None, T).unwrap();
    assert!(o.stdout.contains("anchored on a correct execution"), "{}", o.stdout);
    let p = publish(&d, &prog);
    assert_eq!(p.json["verdict"], "violation");
    assert!(cuts(&p).last().unwrap().iter().any(|&c| c > 0), "{}", p.json);
    assert_eq!(chaos_failures(&prog, 200, true), 0, "a run under the published prefix failed");
}

/// Two threads: `late` computes for a while (no event), then sets `x`; `early` reads `x`. Left
/// alone, the program reads 0 (`early` starts while `late` computes); the default policy's
/// execution runs `late` to its end first (main waits for it, and it is the lowest thread) and
/// reads 1.
const LATE_WRITER: &str = r#"
#include <pthread.h>
#include <stdio.h>
int x;
void *late(void *a) {
  for (long i = 0; i < 200000000; i++) __asm__ volatile("");
  __atomic_store_n(&x, 1, __ATOMIC_SEQ_CST);
  return 0;
}
void *early(void *a) { printf("%d\n", __atomic_load_n(&x, __ATOMIC_SEQ_CST)); return 0; }
int main(void) {
  pthread_t a, b;
  pthread_create(&a, 0, late, 0);
  pthread_create(&b, 0, early, 0);
  pthread_join(a, 0);
  pthread_join(b, 0);
  return 0;
}
"#;

/// The rows of the installed table (`irs prefix show`) of events that are `what`.
fn rows_with(segment: &Path, what: &str) -> Vec<String> {
    let show = run(Command::new(irs()).args(["prefix", "show"]).arg(segment), None, T).unwrap();
    show.stdout.lines().filter(|l| l.split("<-").next().is_some_and(|event| event.contains(what))).map(str::to_string).collect()
}

/// `--anchor natural` cuts the prefixes from the order the program takes when left alone: the
/// read of `x` comes before the late write there and in the table, where the default anchor
/// orders the read after the write (production runs would wait the sleep for it).
#[test]
fn a_natural_anchor_orders_events_as_the_program_left_alone_does() {
    let d = scratch("publish/natural");
    let prog = build(&d, "late", LATE_WRITER);
    let natural = publish_with(&d, &prog, &["--anchor", "natural", "--max-executions", "1"]);
    let store = rows_with(&natural.segment, "store in late");
    assert!(store.iter().any(|r| r.contains("<-  T2#") && r.contains("load in early")), "the write after the read: {store:?}");
    let load = rows_with(&natural.segment, "load in early");
    assert!(load.iter().all(|r| !r.contains("T1#")), "the read waits for nothing of `late`: {load:?}");
    // A verifier restarted on the segment runs the same schedule (kept beside it) and takes the
    // segment over, instead of finding another first execution.
    let again = publish_with(&d, &prog, &["--anchor", "natural", "--max-executions", "1"]);
    assert!(again.json["published"]["error"].is_null(), "{}", again.json);
    assert_eq!(again.json["published"]["reused"], true, "{}", again.json);
    drop((natural, again));
    let default = publish_with(&d, &prog, &["--anchor", "default", "--max-executions", "1"]);
    let load = rows_with(&default.segment, "load in early");
    assert!(load.iter().any(|r| r.contains("<-  T1#") && r.contains("store in late")), "the default anchor reads after the write: {load:?}");
}

/// `--anchor auto` times the program under both candidates' whole traces and anchors on the
/// one it ran faster under, saying both times.
#[test]
fn an_automatic_anchor_is_the_one_timed_faster() {
    let d = scratch("publish/auto");
    let prog = build(&d, "late", LATE_WRITER);
    let p = publish_with(&d, &prog, &["--anchor", "auto", "--max-executions", "1"]);
    let note = p.json["published"]["anchor"].as_str().unwrap_or_else(|| panic!("{}", p.json)).to_string();
    let ms = |after: &str| -> f64 { note.split(after).nth(1).and_then(|r| r.trim().split(' ').next()).and_then(|v| v.parse().ok()).unwrap_or_else(|| panic!("{note}")) };
    let (natural, default) = (ms("the natural one took"), ms("of the default one"));
    let natural_chosen = note.contains("anchored on the program's own order of events");
    assert_eq!(natural_chosen, natural < default, "{note}");
    let store = rows_with(&p.segment, "store in late");
    assert_eq!(natural_chosen, store.iter().any(|r| r.contains("<-  T2#")), "the table is the chosen anchor's: {store:?} ({note})");
}

/// The natural run is isolated as explored executions are: what it writes is not kept.
#[test]
fn the_natural_run_changes_no_file() {
    let d = scratch("publish/natural-files");
    let prog = build(
        &d,
        "writer",
        r#"
#include <pthread.h>
#include <stdio.h>
int x;
void *t(void *a) { __atomic_store_n(&x, 1, __ATOMIC_SEQ_CST); return 0; }
int main(void) {
  pthread_t a;
  pthread_create(&a, 0, t, 0);
  pthread_join(a, 0);
  FILE *f = fopen("written-by-the-program", "w");
  if (f) { fputs("here", f); fclose(f); }
  return 0;
}
"#,
    );
    let o = run(Command::new(irs()).args(["verify", "--publish", "--anchor", "natural", "--out-dir"]).arg(&d).arg("--").arg(&prog).current_dir(&d), None, T).unwrap();
    assert!(o.stdout.contains("anchored on the program's own order of events"), "{}\n{}", o.stdout, o.stderr);
    assert!(!d.join("written-by-the-program").exists(), "the natural run wrote in the user's directory");
    let json = run(Command::new(irs()).args(["verify", "--publish", "--anchor", "natural", "--json", "--out-dir"]).arg(&d).arg("--").arg(&prog).current_dir(&d), None, T).unwrap();
    let j: serde_json::Value = serde_json::from_str(json.stdout.lines().last().unwrap_or_default()).unwrap();
    if let Some(seg) = j["published"]["segment"].as_str() {
        let _ = std::fs::remove_file(seg);
        let _ = std::fs::remove_file(format!("{seg}.anchor"));
    }
}

/// An execution that does not end (here: a thread spinning on a flag another thread never sets
/// in some schedules reaches the event limit) leaves its subtree unexplored beyond it: no prefix
/// above it is proven safe, so the empty prefix is never published, whatever else is found.
#[test]
fn an_execution_that_does_not_end_stops_publishing() {
    let d = scratch("publish/spin");
    let prog = build(
        &d,
        "spin",
        r#"
#include <pthread.h>
volatile int flag, turn;
// Not a spin-wait irs recognises (the count carries from one iteration to the next): a run
// in which nobody sets the flag does not end.
void *waiter(void *a) { long n = 0; while (!flag) n++; return (void *)n; }
void *setter(void *a) { if (turn == 0) flag = 1; return 0; }
int main(void) {
  pthread_t w, s;
  pthread_create(&s, 0, setter, 0);
  pthread_create(&w, 0, waiter, 0);
  turn = 1;
  pthread_join(s, 0);
  flag = 1;
  pthread_join(w, 0);
  return 0;
}
"#,
    );
    let p = publish(&d, &prog);
    assert_eq!(p.json["verdict"], "incomplete", "{}", p.json);
    assert!(cuts(&p).last().unwrap().iter().any(|&c| c > 0), "a prefix above an unended execution stays: {}", p.json);
}

/// DESIGN §3, the process's end: the first execution (the default policy's) has `main` return
/// while the thread it created has done nothing, so the end kills that thread. Every other
/// schedule lets the thread read `x` first and abort, so no smaller prefix is ever safe: the
/// whole first execution stays published, and under it the thread must not run before the end
/// (its first event is outside the prefix, behind main's kills, which never complete), although
/// `main` spins a while before returning and the plain build aborts in most runs.
#[test]
fn a_thread_the_verified_trace_cut_off_stays_behind_until_the_end() {
    let d = scratch("publish/end");
    let prog = build(
        &d,
        "cut",
        r#"
#include <pthread.h>
#include <stdlib.h>
int x;
void *t(void *a) { if (x == 0) abort(); return 0; }
int main(void) {
  pthread_t a;
  pthread_create(&a, 0, t, 0);
  pthread_detach(a);
  for (volatile int i = 0; i < 200000; i++) {}
  return 0;
}
"#,
    );
    let p = publish(&d, &prog);
    assert_eq!(p.json["verdict"], "violation", "{}", p.json);
    let cuts = cuts(&p);
    assert_eq!(cuts.len(), 1, "only the whole first execution is safe: {}", p.json);
    assert_eq!(cuts[0][1], 0, "the first execution cut T1 off before its first event: {}", p.json);
    assert_eq!(chaos_failures(&prog, 200, true), 0, "a thread ran before the end under the published prefix");
    assert!(chaos_failures(&prog, 50, false) > 0, "the plain runs should abort");
}
