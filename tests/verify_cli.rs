//! `irs verify` end to end beyond the oracle's corpus (QPOR, DESIGN §6): the paper's Fig. 1 program
//! (SSB at k = 1, none at k = 2 and optimal), the limits, and bad input — a binary not built by
//! `irs cc`, programs that crash at start-up, that never stop, or that behave differently for the
//! same schedule.

mod common;

use common::*;
use std::path::{Path, PathBuf};
use std::process::Command;

fn build(dir: &Path, name: &str, src: &str, defines: &[&str]) -> PathBuf {
    std::fs::write(dir.join(format!("{name}.c")), src).unwrap();
    let mut args = vec!["-O1"];
    args.extend_from_slice(defines);
    let out = format!("{name}");
    let c = format!("{name}.c");
    args.extend_from_slice(&["-o", &out, &c]);
    irs_cc(dir, &args).unwrap();
    dir.join(name)
}

fn verify(dir: &Path, args: &[&str], prog: &Path) -> Output {
    run(Command::new(irs()).arg("verify").args(args).arg("--out-dir").arg(dir).arg("--").arg(prog).current_dir(dir), None, T).unwrap()
}

fn json(o: &Output) -> serde_json::Value {
    let last = o.stdout.lines().last().unwrap_or_default();
    serde_json::from_str(last).unwrap_or_else(|e| panic!("last line is not JSON ({e}): {}\nstderr: {}", o.stdout, o.stderr))
}

/// One readable line on stderr, exit 2, no backtrace.
fn assert_clean_error(o: &Output, needle: &str) {
    assert_eq!(o.status.code(), Some(2), "stdout: {}\nstderr: {}", o.stdout, o.stderr);
    assert!(o.stderr.contains(needle), "expected `{needle}` in: {}", o.stderr);
    assert_eq!(o.stderr.trim().lines().count(), 1, "one line: {}", o.stderr);
    assert!(!o.stderr.contains("panicked"), "{}", o.stderr);
}

/// The QPOR paper's Fig. 1 program: `n` writers of `x[i]`, a counter thread, and a master that
/// writes `x[c]`. With every access to `c` dependent (reads included: the paper's relation,
/// `--equivalence mazurkiewicz`) it has `2(2n-1)` traces; with reads commuting (the default),
/// where the master's read of `c` commutes with the counter's, `2n` (6 and 10).
const FIG1: &str = r#"
#include <pthread.h>
int x[N]; int c;
void *writer(void *a) { long i = (long)a; x[i] = 7 + i; return 0; }
void *count(void *a) { for (int j = 0; j < N - 1; j++) c++; return 0; }
void *master(void *a) { int i = c; x[i] = 0; return 0; }
int main(void) {
  pthread_t t[N + 2];
  for (long i = 0; i < N; i++) pthread_create(&t[i], 0, writer, (void *)i);
  pthread_create(&t[N], 0, count, 0);
  pthread_create(&t[N + 1], 0, master, 0);
  for (int i = 0; i < N + 2; i++) pthread_join(t[i], 0);
  return 0;
}
"#;

#[test]
fn fig1_is_optimal_from_k2_and_sleep_set_blocked_at_k1() {
    let d = scratch("verify_cli/fig1");
    for n in [3u64, 5] {
        let define = format!("-DN={n}");
        let prog = build(&d, &format!("fig1_{n}"), FIG1, &[&define]);
        let traces = 2 * (2 * n - 1);
        let mz = ["--equivalence", "mazurkiewicz"];
        let k1 = json(&verify(&d, &["--k", "1", "--json", mz[0], mz[1]], &prog));
        let k2 = json(&verify(&d, &["--k", "2", "--json", mz[0], mz[1]], &prog));
        let opt = json(&verify(&d, &["--optimal", "--json", mz[0], mz[1]], &prog));
        let default = json(&verify(&d, &["--json"], &prog));
        assert_eq!((default["traces"].as_u64(), default["ssb"].as_u64()), (Some(2 * n), Some(0)), "n={n}, reads commuting: {default}");
        for (mode, j) in [("k1", &k1), ("k2", &k2), ("optimal", &opt)] {
            assert_eq!(j["traces"], traces, "n={n} {mode}: {j}");
            assert_eq!(j["verdict"], "safe", "n={n} {mode}: {j}");
            assert_eq!(j["executions"].as_u64().unwrap(), traces + j["ssb"].as_u64().unwrap(), "n={n} {mode}: {j}");
        }
        assert_eq!(k2["ssb"], 0, "n={n}: {k2}");
        assert_eq!(opt["ssb"], 0, "n={n}: {opt}");
        assert!(k1["ssb"].as_u64().unwrap() > 0, "n={n}: SDPOR-like k=1 should block here: {k1}");
        assert_eq!(opt["k"], "optimal");
        assert_eq!(k1["k"], 1);
    }
}

/// Pruning `U` as often as every 64 new events on a program of thousands of traces whose `U`
/// has long branches of sibling histories (the job dispatcher of `benchmarks/qpor`, 5 jobs, 3
/// workers): optimal mode still runs each trace once with no SSB. A prune that lost part of a
/// kept event's history would trip the unfolding's closure check.
#[test]
fn frequent_pruning_keeps_optimal_exploration_exact() {
    let d = scratch("verify_cli/prune");
    let src = std::fs::read_to_string(repo().join("benchmarks/qpor/disp.c")).unwrap();
    let prog = build(&d, "disp53", &src, &["-DJOBS=5", "-DWORKERS=3", "-DRESOURCES=2"]);
    let j = json(&verify(&d, &["--optimal", "--prune-at", "64", "--json"], &prog));
    assert_eq!((j["traces"].as_u64(), j["ssb"].as_u64(), j["verdict"].as_str()), (Some(4494), Some(0), Some("safe")), "{j}");
    assert!(j["events_peak"].as_u64().unwrap() < 4_000, "pruned: {j}");
}

/// Two threads add to `x`, under a mutex (`-DLOCKED`) or not; `main` checks the sum after the
/// joins.
const COUNTER: &str = r#"
#include <assert.h>
#include <pthread.h>
pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
int x, y;
void *add(void *a) {
#ifdef LOCKED
  pthread_mutex_lock(&m);
#endif
  x = x + 1; y = y + x;
#ifdef LOCKED
  pthread_mutex_unlock(&m);
#endif
  return 0;
}
int main(void) {
  pthread_t t[2];
  for (int i = 0; i < 2; i++) pthread_create(&t[i], 0, add, 0);
  for (int i = 0; i < 2; i++) pthread_join(t[i], 0);
  assert(x == 2);
  return 0;
}
"#;

/// Words that synchronisation orders are explored without events of their own, and the check
/// behind that catches every race: the locked counter keeps its words race-free (no restart);
/// the racy one finds `x` and `y` racy and starts over, once per word found. Both count the
/// traces (and SSB, and verdicts) that `--no-race-free-words` counts, where every word is an
/// object from the start, and the schedules written across a restart are each trace once.
#[test]
fn race_free_words_count_the_same_traces_and_a_race_starts_the_exploration_over() {
    let d = scratch("verify_cli/race_free_words");
    let locked = build(&d, "counter_locked", COUNTER, &["-DLOCKED"]);
    let racy = build(&d, "counter_racy", COUNTER, &[]);
    for (prog, verdict) in [(&locked, "safe"), (&racy, "violation")] {
        for mode in [&["--optimal"][..], &["--k", "1"][..]] {
            let mut args = mode.to_vec();
            args.push("--json");
            let on = json(&verify(&d, &args, prog));
            args.push("--no-race-free-words");
            let off = json(&verify(&d, &args, prog));
            for k in ["traces", "ssb", "executions", "verdict"] {
                assert_eq!(on[k], off[k], "{k} of {} {mode:?}: {on}\nall words objects: {off}", prog.display());
            }
            assert_eq!(on["verdict"], verdict, "{on}");
            assert_eq!((off["race_free_words"].as_u64(), off["restarts"].as_u64()), (Some(0), Some(0)), "{off}");
        }
    }
    let schedules = d.join("racy.schedules");
    let j = json(&verify(&d, &["--json", "--schedules-out", schedules.to_str().unwrap()], &racy));
    assert_eq!(j["racy_words"].as_u64(), Some(2), "x and y: {j}");
    let races: Vec<&str> = j["races"].as_array().unwrap().iter().map(|r| r.as_str().unwrap()).collect();
    assert_eq!(races.len(), 2, "{j}");
    assert!(races.iter().all(|r| r.contains("counter_racy.c:") && r.contains("not ordered after")), "each with its source line: {races:?}");
    assert!((1..=2).contains(&j["restarts"].as_u64().unwrap()), "{j}");
    let lines = std::fs::read_to_string(&schedules).unwrap();
    assert_eq!(lines.lines().count() as u64, j["traces"].as_u64().unwrap(), "{lines}");
    let j = json(&verify(&d, &["--json"], &locked));
    assert_eq!((j["racy_words"].as_u64(), j["restarts"].as_u64()), (Some(0), Some(0)), "{j}");
    assert!(j["race_free_words"].as_u64().unwrap() >= 2, "x and y at least: {j}");
    let o = verify(&d, &[], &locked);
    assert!(o.stdout.contains(" race-free (ordered by synchronisation"), "{}", o.stdout);
    assert!(!o.stdout.contains("race: "), "{}", o.stdout);
    let o = verify(&d, &[], &racy);
    assert_eq!(o.stdout.lines().filter(|l| l.starts_with("race: the ")).count(), 2, "{}", o.stdout);
}

/// The report splits the verifier's share of the time: the walk behind the program (timed
/// against the server's clock), backtracking and pruning. Each is there, and none is more than
/// the whole (a clock mismatch between the two processes would make the walk behind absurd).
#[test]
fn the_report_says_where_the_program_waits_for_the_verifier() {
    let d = scratch("verify_cli/phases");
    let src = std::fs::read_to_string(repo().join("benchmarks/qpor/disp.c")).unwrap();
    let prog = build(&d, "disp52", &src, &["-DJOBS=5", "-DWORKERS=2", "-DRESOURCES=2"]);
    let j = json(&verify(&d, &["--prune-at", "64", "--json"], &prog));
    assert_eq!(j["traces"].as_u64(), Some(250), "{j}");
    let secs = |k: &str| j[k].as_f64().unwrap_or_else(|| panic!("{k} missing: {j}"));
    let total = secs("seconds");
    for k in ["walk_behind_seconds", "backtrack_seconds", "prune_seconds"] {
        assert!(secs(k) > 0.0 && secs(k) < total, "{k}: {j}");
    }
    assert!(secs("walk_behind_seconds") + secs("backtrack_seconds") < total, "{j}");
    let o = verify(&d, &["--prune-at", "64"], &prog);
    assert!(o.stdout.contains("the program waiting for the verifier: "), "{}", o.stdout);
}

#[test]
fn limits_make_the_verdict_incomplete() {
    let d = scratch("verify_cli/limits");
    let prog = build(&d, "fig1_5", FIG1, &["-DN=5"]);
    let o = verify(&d, &["--max-executions", "3", "--json"], &prog);
    assert_eq!(o.status.code(), Some(0), "{}", o.stderr);
    let j = json(&o);
    assert_eq!(j["verdict"], "incomplete", "{j}");
    assert_eq!(j["executions"], 3, "{j}");
    assert!(j["stopped"].as_str().unwrap().contains("3 executions"), "{j}");
    // What a verdict covers is said, in JSON and in text; the text names the limit.
    assert!(j["covers"].as_str().unwrap().contains("not every execution"), "{j}");
    assert!(o.stdout.contains("verdict: incomplete (stopped at the limit of 3 executions)"), "{}", o.stdout);
    let o = verify(&d, &["--json"], &prog);
    let j = json(&o);
    assert_eq!((j["verdict"].as_str(), j["bounds"].as_array().map(|b| b.len())), (Some("safe"), Some(0)), "{j}");
    assert!(j["covers"].as_str().unwrap().starts_with("every execution for this input"), "{j}");
    assert!(o.stdout.contains("\nverdict: safe\n"), "{}", o.stdout);
}

/// `--max-executions 0` is refused with the reason (an exploration always runs its first
/// execution); `--memory-limit` stops the exploration with `incomplete`, naming the limit; a
/// size that is none is refused in one line.
#[test]
fn zero_executions_are_refused_and_the_memory_limit_stops_with_incomplete() {
    let d = scratch("verify_cli/memory_limit");
    let prog = build(&d, "fig1_5", FIG1, &["-DN=5"]);
    assert_clean_error(&verify(&d, &["--max-executions", "0"], &prog), "--max-executions 0 would verify nothing");
    // Any process's resident set is above 1 MiB: the limit is reached at the first check.
    let o = verify(&d, &["--memory-limit", "1M", "--json"], &prog);
    assert_eq!(o.status.code(), Some(0), "{}{}", o.stdout, o.stderr);
    let j = json(&o);
    assert_eq!(j["verdict"], "incomplete", "{j}");
    let stopped = j["stopped"].as_str().unwrap();
    assert!(stopped.starts_with("stopped at the memory limit of 1 MiB after ") && stopped.ends_with(" executions"), "{j}");
    assert!(j["executions"].as_u64().unwrap() < 10, "stopped before the 10 traces were all explored: {j}");
    assert!(o.stdout.contains("verdict: incomplete (stopped at the memory limit of 1 MiB after "), "{}", o.stdout);
    // A limit the exploration stays under changes nothing.
    let j = json(&verify(&d, &["--memory-limit", "8GiB", "--json"], &prog));
    assert_eq!((j["verdict"].as_str(), j["traces"].as_u64()), (Some("safe"), Some(10)), "{j}");
    assert_clean_error(&verify(&d, &["--memory-limit", "4X"], &prog), "is not a size");
    assert_clean_error(&verify(&d, &["--memory-limit", "0"], &prog), "is not a size");
}

/// The limits hold inside a run's walk: the placements of one rwlock write against readers who
/// each read hundreds of times number millions (each reader's operations are on its own copy of
/// the rwlock), and enumerating them outlasted `--time-limit` by hours before; now the
/// exploration stops at the limit, `incomplete`.
#[test]
fn the_time_limit_holds_inside_a_walk() {
    let d = scratch("verify_cli/walk_limit");
    let src = std::fs::read_to_string(repo().join("benchmarks/sync_programs/rw_cache.c")).unwrap();
    let inc = format!("-I{}", repo().join("benchmarks/sync_programs").display());
    let prog = build(&d, "rw_cache", &src, &["-pthread", "-DREADERS=3", "-DREADS=300", "-DUPDATES=100", &inc]);
    let t = std::time::Instant::now();
    let o = verify(&d, &["--time-limit", "3", "--json"], &prog);
    let j = json(&o);
    assert_eq!(j["verdict"], "incomplete", "{j}");
    assert!(j["stopped"].as_str().unwrap().contains("time limit"), "{j}");
    assert!(t.elapsed() < std::time::Duration::from_secs(30), "took {:?}", t.elapsed());
}

/// Unordered reads of a word are no data race (and with reads commuting the word stays
/// race-free: no object, no restart); unordered writes of a `long` (two words, one access) are one.
/// `race:` lines name only conflicting pairs, each once; a word found unordered by reads first
/// is still reported when a write races with a read of it.
#[test]
fn race_lines_name_only_conflicting_pairs_once_each() {
    let d = scratch("verify_cli/race_lines");
    let src = |body: &str| format!("#include <pthread.h>\nint config = 5; long total;\nvoid *t(void *a) {{ {body} }}\nint main(void) {{ pthread_t x, y; pthread_create(&x, 0, t, (void *)1); pthread_create(&y, 0, t, (void *)2); pthread_join(x, 0); pthread_join(y, 0); return 0; }}\n");
    let races_of = |name: &str, body: &str| {
        let prog = build(&d, name, &src(body), &[]);
        let o = verify(&d, &["--json"], &prog);
        assert_eq!(o.status.code(), Some(0), "{}{}", o.stdout, o.stderr);
        let lines: Vec<String> = o.stdout.lines().filter(|l| l.starts_with("race: ")).map(String::from).collect();
        let j = json(&o);
        assert_eq!(j["races"].as_array().map(|r| r.len()), Some(lines.len()), "{j}");
        (lines, j)
    };
    let (races, j) = races_of("races", "int c = config; total = c + (long)a; return 0;");
    assert_eq!(races.len(), 1, "{races:?}");
    assert!(races[0].contains("the store at races.c:3") && races[0].contains("(global total)"), "{races:?}");
    assert_eq!(j["racy_words"].as_u64(), Some(2), "total's two words are objects, config (only read) is not: {j}");
    let (races, _) = races_of("reads_only", "int c = config; return (void *)(long)c;");
    assert!(races.is_empty(), "{races:?}");
    let (races, _) = races_of("read_then_write", "int c = config; if ((long)a == 2) config = 0; return (void *)(long)c;");
    assert_eq!(races.len(), 1, "{races:?}");
    assert!(races[0].contains("(global config)"), "{races:?}");
}

#[test]
fn bugs_come_with_schedules_that_replay_them() {
    let d = scratch("verify_cli/bugs");
    let prog = build(
        &d,
        "race",
        r#"
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
"#,
        &[],
    );
    let o = verify(&d, &["--json"], &prog);
    assert_eq!(o.status.code(), Some(1), "{}{}", o.stdout, o.stderr);
    let j = json(&o);
    assert_eq!(j["verdict"], "violation");
    let v = &j["violations"].as_array().unwrap()[0];
    assert_eq!(v["kind"], "assert");
    assert!(v["message"].as_str().unwrap().contains("x == 2"), "{v}");
    let schedule = v["schedule"].as_str().unwrap();
    let r = run(Command::new(irs()).args(["replay", "--schedule", schedule, "--"]).arg(&prog), None, T).unwrap();
    assert_eq!(r.status.code(), Some(1), "{}", r.stdout);
    assert!(r.stdout.contains("violation assert") && r.stdout.contains("x == 2"), "{}", r.stdout);
}

#[test]
fn bad_input_gets_one_line_and_exit_2() {
    let d = scratch("verify_cli/bad");
    assert_clean_error(&verify(&d, &[], Path::new("/bin/true")), "not built by irs cc");
    assert_clean_error(&verify(&d, &[], &d.join("missing")), "no such program");
    assert_clean_error(&verify(&d, &["--bogus"], Path::new("/bin/true")), "unexpected argument '--bogus'");
    let ctor = build(&d, "ctor", "#include <stdlib.h>\n__attribute__((constructor)) static void boom(void) { abort(); }\nint main(void) { return 0; }\n", &[]);
    assert_clean_error(&verify(&d, &[], &ctor), "did not start as an irs fork server");
    // Behaviour that depends on randomness rather than on the schedule.
    let nondet = build(
        &d,
        "nondet",
        include_str!("programs/nondet/getrandom_branch.c"),
        &[],
    );
    // Two runs agree by chance half of the time; the verifier must notice within a few tries.
    let mut noticed = false;
    for _ in 0..8 {
        let o = verify(&d, &[], &nondet);
        if o.status.code() == Some(2) {
            assert_clean_error(&o, "behaved differently for the same schedule");
            noticed = true;
            break;
        }
    }
    assert!(noticed, "nondeterminism went unnoticed in 8 verifications");
    let o = run(Command::new(irs()).args(["verify", "--k", "0", "--"]).arg(&nondet), None, T).unwrap();
    assert_eq!(o.status.code(), Some(2));
}

/// A program that fails before it starts as a fork server but leaves a process behind that holds
/// its pipes (here a child sleeping 30 s) is refused at once: the verifier waits for the hello
/// or the server's end, and reads what it said for a moment, not until every holder of the
/// pipes is gone. One stuck before `main` is refused after the per-execution time limit.
#[test]
fn start_up_failures_are_reported_without_waiting_for_what_they_leave_behind() {
    let d = scratch("verify_cli/orphan");
    let src = "#include <stdlib.h>\n#include <unistd.h>\n__attribute__((constructor)) static void boom(void) { if (fork() == 0) { sleep(30); _exit(0); } abort(); }\nint main(void) { return 0; }\n";
    let prog = build(&d, "orphan", src, &[]);
    let started = std::time::Instant::now();
    assert_clean_error(&verify(&d, &[], &prog), "did not start as an irs fork server");
    assert!(started.elapsed() < std::time::Duration::from_secs(10), "took {:?}", started.elapsed());
    // One that never gets to `main` is given the per-execution time limit.
    let stuck = build(&d, "stuck", "#include <unistd.h>\n__attribute__((constructor)) static void stuck(void) { for (;;) sleep(1); }\nint main(void) { return 0; }\n", &[]);
    let started = std::time::Instant::now();
    assert_clean_error(&verify(&d, &["--timeout", "1"], &stuck), "did not say hello within 1 s");
    assert!(started.elapsed() < std::time::Duration::from_secs(10), "took {:?}", started.elapsed());
}

#[test]
fn crashes_and_programs_that_never_stop_are_reported() {
    let d = scratch("verify_cli/crash");
    let crash = build(&d, "crash", "int main(int argc, char **argv) { volatile int *p = 0; *p = argc; return 0; }\n", &[]);
    let o = verify(&d, &["--json"], &crash);
    assert_eq!(o.status.code(), Some(1), "{}{}", o.stdout, o.stderr);
    let j = json(&o);
    assert_eq!(j["violations"][0]["kind"], "crash", "{j}");
    // A loop that is not a spin-wait irs recognises (it counts its iterations) never ends: the
    // event limit, `incomplete`.
    let spin = build(
        &d,
        "spin",
        "#include <pthread.h>\nvolatile int flag;\nvoid *t(void *a) { long n = 0; while (!flag) n++; return (void *)n; }\nint main(void) { pthread_t a; pthread_create(&a, 0, t, 0); pthread_join(a, 0); flag = 1; return 0; }\n",
        &[],
    );
    let o = verify(&d, &["--json", "--timeout", "5"], &spin);
    let j = json(&o);
    assert_eq!(j["verdict"], "incomplete", "{j}");
    assert_eq!(j["violations"][0]["kind"], "event-limit", "{j}");
    // One event limit, named the same everywhere: the limit itself, not how many events the
    // cut-off run had written when some record ran out.
    let limit = shared_proto::explore_buffer::Capacity::DEFAULT.events;
    assert_eq!(j["violations"][0]["message"], format!("stopped at the limit of {limit} events per execution (a program that never stops?)"), "{j}");
    let o = verify(&d, &["--timeout", "5"], &spin);
    let named: Vec<&str> = o.stdout.split("limit of ").skip(1).filter_map(|t| t.split(' ').next()).collect();
    assert!(!named.is_empty() && named.iter().all(|n| *n == limit.to_string()), "{named:?} in {}", o.stdout);
    // The same as a spin-wait: a livelock (main waits to join a thread that waits for main),
    // reported as a deadlock with where the thread spins, and a schedule that replays to it.
    let wait = build(
        &d,
        "wait",
        "#include <pthread.h>\nvolatile int flag;\nvoid *t(void *a) { while (!flag) {} return 0; }\nint main(void) { pthread_t a; pthread_create(&a, 0, t, 0); pthread_join(a, 0); flag = 1; return 0; }\n",
        &[],
    );
    let o = verify(&d, &["--json"], &wait);
    let j = json(&o);
    assert_eq!(j["verdict"], "violation", "{j}");
    assert_eq!(j["violations"][0]["kind"], "deadlock", "{j}");
    let message = j["violations"][0]["message"].as_str().unwrap();
    assert!(message.contains("T1 spins at wait.c:3") && message.contains("T0 waits to join T1"), "{message}");
    let r = run(Command::new(irs()).args(["replay", "--schedule", j["violations"][0]["schedule"].as_str().unwrap(), "--"]).arg(&wait).current_dir(&d), None, T).unwrap();
    assert!(r.stdout.contains("outcome: deadlock: T1 spins at"), "{}", r.stdout);
}

/// A program that computes for milliseconds before its threads start: by default the verifier
/// pauses an execution after that prefix (a snapshot) once re-running it has cost as much as a
/// snapshot, and runs the rest of the exploration from there. The counts are those of runs
/// from `main`; the program's running time drops to a fraction.
#[test]
fn an_expensive_prefix_is_run_once_from_a_snapshot() {
    let dir = scratch("verify_cli/expensive_prefix");
    // The snapshot benchmark's program: 4M iterations of work, then 3 threads taking a mutex
    // twice each (6! / 2!^3 = 90 traces).
    let src = repo().join("benchmarks/snapshots/prefix.c");
    let prog = dir.join("prefix");
    irs_cc(&dir, &["-O1", "-DWORK=4000000", "-DNT=3", "-DITERS=2", "-o", "prefix", src.to_str().unwrap()]).unwrap();
    let off = json(&verify(&dir, &["--json", "--no-snapshots"], &prog));
    let auto = json(&verify(&dir, &["--json"], &prog));
    assert_eq!(off["snapshots"], 0);
    assert!(auto["snapshots"].as_u64().unwrap() >= 1, "{auto}");
    for key in ["traces", "ssb", "executions", "verdict"] {
        assert_eq!(auto[key], off[key], "{key}");
    }
    assert_eq!(auto["traces"], 90);
    let (a, o) = (auto["program_seconds"].as_f64().unwrap(), off["program_seconds"].as_f64().unwrap());
    assert!(a < o / 2.0, "the prefix re-run: {a} s of program time with snapshots, {o} s without");
    // The options conflict: one line, exit 2.
    assert_clean_error(&verify(&dir, &["--no-snapshots", "--snapshot-gap", "4"], &prog), "--no-snapshots");
}

/// The SV-COMP interface (docs/src/sv-comp.md): a task that declares `__VERIFIER_*` and defines nothing
/// builds and verifies; a nondet int explored over {0, 1} gives `safe-within-bounds` naming the
/// call (never plain `safe`), a domain holding the failing value finds the bug, whose `irs replay`
/// command (with the same values) reproduces it; a bool alone is explored whole (plain `safe`); a
/// failed assumption discards executions without a bug; a function EXPLORE does not model is
/// reported by name.
#[test]
fn the_sv_comp_interface_and_what_a_verdict_covers() {
    let d = scratch("verify_cli/svcomp");
    let task = build(
        &d,
        "task",
        r#"
#include <pthread.h>
extern int __VERIFIER_nondet_int(void);
extern _Bool __VERIFIER_nondet_bool(void);
extern void __VERIFIER_assume(int);
extern void __VERIFIER_assert(int);
extern void __VERIFIER_error(void);
int x, flag;
void *t(void *a) { x = __VERIFIER_nondet_int(); flag = __VERIFIER_nondet_bool(); return 0; }
int main(void) {
  pthread_t th;
  pthread_create(&th, 0, t, 0);
  pthread_join(th, 0);
  __VERIFIER_assume(flag);
  __VERIFIER_assert(x != 42);
  if (x == -7) __VERIFIER_error();
  return 0;
}
"#,
        &[],
    );
    let o = verify(&d, &["--json"], &task);
    assert_eq!(o.status.code(), Some(0), "{}{}", o.stdout, o.stderr);
    let j = json(&o);
    assert_eq!((j["verdict"].as_str(), j["traces"].as_u64(), j["discarded"].as_u64()), (Some("safe-within-bounds"), Some(4), Some(2)), "{j}");
    let bounds = j["bounds"].as_array().unwrap();
    assert!(bounds.len() == 1 && bounds[0].as_str().unwrap().starts_with("__VERIFIER_nondet_int at ") && bounds[0].as_str().unwrap().contains("{0, 1}"), "{j}");
    assert!(o.stdout.contains("verdict: safe-within-bounds (__VERIFIER_nondet_int at "), "{}", o.stdout);
    assert!(o.stdout.contains("discarded: 2 of the traces"), "{}", o.stdout);
    // The failing values: one bug per failing call, each reproduced with the same values.
    let o = verify(&d, &["--json", "--nondet-values", "0,42,-7"], &task);
    assert_eq!(o.status.code(), Some(1), "{}{}", o.stdout, o.stderr);
    let j = json(&o);
    let kinds: Vec<&str> = j["violations"].as_array().unwrap().iter().map(|v| v["kind"].as_str().unwrap()).collect();
    assert_eq!(kinds, ["assert", "reach_error"], "{j}");
    assert!(o.stdout.contains("reproduce: irs replay --nondet-values 0,42,-7 --schedule"), "{}", o.stdout);
    for v in j["violations"].as_array().unwrap() {
        let r = run(Command::new(irs()).args(["replay", "--nondet-values", "0,42,-7", "--schedule", v["schedule"].as_str().unwrap(), "--"]).arg(&task), None, T).unwrap();
        assert_eq!(r.status.code(), Some(1), "{}", r.stdout);
    }
    // A bool is explored whole: plain `safe`.
    let whole = build(
        &d,
        "bool_only",
        r#"
#include <pthread.h>
extern _Bool __VERIFIER_nondet_bool(void);
extern void __VERIFIER_assert(int);
int x;
void *t(void *a) { if (__VERIFIER_nondet_bool()) x = 1; return 0; }
int main(void) { pthread_t th; pthread_create(&th, 0, t, 0); pthread_join(th, 0); __VERIFIER_assert(x == 0 || x == 1); return 0; }
"#,
        &[],
    );
    let j = json(&verify(&d, &["--json"], &whole));
    assert_eq!((j["verdict"].as_str(), j["traces"].as_u64()), (Some("safe"), Some(2)), "{j}");
    // Cancellation is not modelled: said by name, no verdict.
    let cond = build(
        &d,
        "cancel",
        r#"
#include <pthread.h>
#include <unistd.h>
void *t(void *a) { return a; }
int main(void) { pthread_t th; pthread_create(&th, 0, t, 0); pthread_cancel(th); pthread_join(th, 0); return 0; }
"#,
        &[],
    );
    let o = verify(&d, &["--json"], &cond);
    assert_clean_error(&o, "unsupported: pthread_cancel at cancel.c:5");
    assert!(!o.stdout.contains("verdict"), "an error is never a verdict: {}", o.stdout);
}

/// A mutex in a heap block that another thread freed while holding it (chan's `close`, found on
/// a real channel library): the free is a write of the block's words and the unlock a read of
/// the mutex's first word, so the exploration orders them both ways and `irs verify` reports the
/// use after free under either relation, naming who freed the block; the schedule it writes
/// replays to it. main creates the closer, which locks and sets `closed`; main reads it and
/// frees; the closer unlocks.
const UNLOCK_AFTER_FREE: &str = r#"
#include <pthread.h>
#include <stdlib.h>
struct chan { pthread_mutex_t m; int closed; };
static struct chan *c;
static void *closer(void *a) {
  pthread_mutex_lock(&c->m);
  __atomic_store_n(&c->closed, 1, __ATOMIC_SEQ_CST);
  pthread_mutex_unlock(&c->m);
  return 0;
}
int main(void) {
  c = malloc(sizeof *c);
  pthread_mutex_init(&c->m, 0);
  c->closed = 0;
  pthread_t t;
  pthread_create(&t, 0, closer, 0);
  if (__atomic_load_n(&c->closed, __ATOMIC_SEQ_CST))
    free(c);
  pthread_join(t, 0);
  return 0;
}
"#;

#[test]
fn an_unlock_in_a_freed_block_is_reported_as_a_use_after_free() {
    let d = scratch("verify_cli/unlock_after_free");
    let prog = build(&d, "uaf", UNLOCK_AFTER_FREE, &[]);
    for eq in ["reads-commute", "mazurkiewicz"] {
        let o = verify(&d, &["--json", "--equivalence", eq], &prog);
        assert_eq!(o.status.code(), Some(1), "{eq}: {}{}", o.stdout, o.stderr);
        let j = json(&o);
        let v = &j["violations"][0];
        let message = v["message"].as_str().unwrap_or_default();
        assert!(message.starts_with("T1 unlocks mutex heap[T0#0] in a heap block T0 freed (a use after free)"), "{eq}: {j}");
        let r = run(Command::new(irs()).args(["replay", "--schedule", v["schedule"].as_str().unwrap(), "--"]).arg(&prog).current_dir(&d), None, T).unwrap();
        assert!(format!("{}{}", r.stdout, r.stderr).contains(message), "{eq}: {}", r.stdout);
    }
}

/// `--max-threads`: a program that creates threads without end gets a bounded verdict naming
/// the bound (a default one without the flag, since EXPLORE runs at most 64 threads), finds a
/// bug that needs three workers at bound 3 and not at bound 2, and the bug's schedule replays
/// under the same bound.
#[test]
fn a_thread_bound_makes_unbounded_creation_verifiable_and_names_itself() {
    let d = scratch("verify_cli/max_threads");
    let prog = build(
        &d,
        "loop",
        "#include <pthread.h>\n#include <assert.h>\nint c;\n\
         void *w(void *a) { __atomic_fetch_add(&c, 1, __ATOMIC_SEQ_CST); return a; }\n\
         int main(void) { pthread_t t; for (;;) { pthread_create(&t, 0, w, 0); assert(__atomic_load_n(&c, __ATOMIC_SEQ_CST) <= 2); } }\n",
        &["-pthread"],
    );
    assert_clean_error(&verify(&d, &["--max-threads", "0"], &prog), "--max-threads");
    // Without the flag, the default bound (2), named as a default.
    let default = json(&verify(&d, &["--json"], &prog));
    assert_eq!((default["verdict"].as_str(), default["max_threads"].as_u64()), (Some("safe-within-bounds"), Some(2)), "{default}");
    assert!(default["bounds"][0].as_str().unwrap().contains("a default bound"), "{default}");
    let two = verify(&d, &["--max-threads", "2", "--json"], &prog);
    let j = json(&two);
    assert_eq!(j["verdict"], "safe-within-bounds", "{}", two.stdout);
    assert_eq!(j["max_threads"], 2);
    assert!(j["thread_bound_cuts"].as_u64().unwrap() > 0 && j["thread_bound_cuts"] == j["traces"], "every execution ends at the bound: {}", two.stdout);
    assert!(j["bounds"][0].as_str().unwrap().starts_with("each thread creates at most 2 threads (--max-threads"), "{}", two.stdout);
    let three = verify(&d, &["--max-threads", "3"], &prog);
    assert_eq!(three.status.code(), Some(1), "{}{}", three.stdout, three.stderr);
    let reproduce = three.stdout.lines().find_map(|l| l.trim().strip_prefix("reproduce: ")).unwrap_or_else(|| panic!("{}", three.stdout));
    assert!(reproduce.starts_with("irs replay --max-threads 3 --schedule "), "{reproduce}");
    let sched = reproduce.split_whitespace().nth(5).unwrap();
    let replay = run(Command::new(irs()).args(["replay", "--max-threads", "3", "--schedule", sched, "--"]).arg(&prog).current_dir(&d), None, T).unwrap();
    assert_eq!(replay.status.code(), Some(1), "{}{}", replay.stdout, replay.stderr);
    assert!(replay.stdout.contains("Assertion"), "{}", replay.stdout);
}

/// A writer-preferring rwlock (glibc's `PTHREAD_RWLOCK_PREFER_WRITER_NONRECURSIVE_NP`, set by an
/// attribute or by its static initializer) lets a waiting writer keep new readers out, so a
/// reader asking again behind it deadlocks in the plain build: the readers-preferred model
/// would call such a program safe, so it is refused by name instead.
#[test]
fn a_writer_preferring_rwlock_is_refused_not_explored_as_readers_preferred() {
    let d = scratch("verify_cli/writer_preferring");
    let body = "void *r(void *a) { pthread_rwlock_rdlock(&l); pthread_rwlock_rdlock(&l); pthread_rwlock_unlock(&l); pthread_rwlock_unlock(&l); return a; }\n\
                void *w(void *a) { pthread_rwlock_wrlock(&l); pthread_rwlock_unlock(&l); return a; }\n";
    let by_attr = build(
        &d,
        "by_attr",
        &format!(
            "#define _GNU_SOURCE\n#include <pthread.h>\npthread_rwlock_t l;\n{body}\
             int main(void) {{ pthread_rwlockattr_t at; pthread_rwlockattr_init(&at); pthread_rwlockattr_setkind_np(&at, PTHREAD_RWLOCK_PREFER_WRITER_NONRECURSIVE_NP);\n\
             pthread_rwlock_init(&l, &at); pthread_t a, b; pthread_create(&a, 0, r, 0); pthread_create(&b, 0, w, 0); pthread_join(a, 0); pthread_join(b, 0); return 0; }}\n"
        ),
        &["-pthread"],
    );
    let by_initializer = build(
        &d,
        "by_initializer",
        &format!(
            "#define _GNU_SOURCE\n#include <pthread.h>\npthread_rwlock_t l = PTHREAD_RWLOCK_WRITER_NONRECURSIVE_INITIALIZER_NP;\n{body}\
             int main(void) {{ pthread_t a, b; pthread_create(&a, 0, r, 0); pthread_create(&b, 0, w, 0); pthread_join(a, 0); pthread_join(b, 0); return 0; }}\n"
        ),
        &["-pthread"],
    );
    for prog in [by_attr, by_initializer] {
        assert_clean_error(&verify(&d, &[], &prog), "unsupported: a writer-preferring rwlock");
    }
}
