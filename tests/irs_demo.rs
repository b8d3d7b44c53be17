//! `irs demo` end to end (DESIGN §1, IRS paper §4): interrupted, it stops its verifier; run again,
//! it starts from scratch, finds the bank's bug with a schedule that replays to the violation, no
//! run under IRS fails, the fixed bank ends with the empty prefix, and the plot is written.

mod common;

use common::*;
use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// The number after `key` on a line of `text` that starts with `prefix` (the first such line).
fn field<'a>(text: &'a str, prefix: &str, key: &str) -> Vec<&'a str> {
    text.lines().filter(|l| l.trim_start().starts_with(prefix)).filter_map(|l| l.split(key).nth(1)).collect()
}

#[test]
fn demo_finds_the_bug_keeps_every_run_safe_and_plots() {
    let d = scratch("irs_demo");
    let dir = d.join("demo");
    // Interrupted while it runs: it stops the verifier it started.
    let mut child = Command::new(irs()).args(["demo", "--dir"]).arg(&dir).stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().unwrap();
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    let started = Instant::now();
    let pid: i32 = loop {
        let line = lines.next().expect("the demo ended before starting a verifier").unwrap();
        if let Some(rest) = line.split("started the background verifier (pid ").nth(1) {
            break rest.split(')').next().unwrap().parse().unwrap();
        }
        assert!(started.elapsed() < Duration::from_secs(120), "no verifier started");
    };
    // A few status lines, then Ctrl-C.
    for _ in 0..3 {
        lines.next();
    }
    // SAFETY: signalling the demo this test started.
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
    let status = child.wait().unwrap();
    let mut stderr = String::new();
    std::io::Read::read_to_string(&mut child.stderr.take().unwrap(), &mut stderr).unwrap();
    assert_eq!(status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("interrupted; the verifier of"), "{stderr}");
    // SAFETY: signal 0 only asks whether the process exists.
    assert!(unsafe { libc::kill(pid, 0) } != 0 || std::fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|s| s.contains(") Z")), "verifier {pid} still runs");

    // Run to the end: it starts from scratch although the interrupted run left a segment.
    let o = run(Command::new(irs()).args(["demo", "--dir"]).arg(&dir), None, Duration::from_secs(300)).unwrap();
    let out = &o.stdout;
    assert!(o.status.success(), "{out}\n{}", o.stderr);
    assert_eq!(out.matches("started the background verifier").count(), 2, "{out}");
    for first in field(out, "the first prefix was there", "its first execution, ") {
        assert!(first.starts_with("21 constraints"), "the story starts from the whole first execution: {out}");
    }
    // Every run under IRS exited 0, in both acts.
    let safe = field(out, "runs under IRS:", "runs under IRS: ");
    assert_eq!(safe.len(), 2, "{out}");
    for s in safe {
        let (ok, rest) = s.split_once(" of ").unwrap();
        let total = rest.split(' ').next().unwrap();
        assert_eq!(ok, total, "{out}");
        assert!(ok.parse::<u32>().unwrap() >= 50, "{out}");
    }
    // The bug was found, and its schedule replays to the violation.
    assert!(out.contains("verdict violation") && out.contains("found: violation assert"), "{out}");
    let cmd = field(out, "reproduce it:", "reproduce it: ");
    assert_eq!(cmd.len(), 1, "{out}");
    let words: Vec<&str> = cmd[0].split_whitespace().collect();
    assert_eq!(&words[..2], ["irs", "replay"], "{out}");
    let replay = run(Command::new(irs()).args(&words[1..]), None, T).unwrap();
    assert_eq!(replay.status.code(), Some(1), "{}{}", replay.stdout, replay.stderr);
    assert!(replay.stdout.contains("violation assert"), "{}", replay.stdout);
    // The buggy bank keeps a prefix; the fixed one ends with none.
    let prefixes = field(out, "prefix in force", "cutoff ");
    assert_eq!(prefixes.len(), 2, "{out}");
    assert!(prefixes[0].split(' ').next().unwrap().split(',').any(|c| c != "0"), "{out}");
    assert!(prefixes[1].split(' ').next().unwrap().split(',').all(|c| c == "0"), "{out}");
    assert!(out.contains("verdict safe"), "{out}");
    // The plot.
    let svg = std::fs::read_to_string(dir.join("irs-demo.svg")).unwrap();
    assert!(svg.starts_with("<svg xmlns=\"http://www.w3.org/2000/svg\"") && svg.trim_end().ends_with("</svg>"), "{svg}");
    assert_eq!(svg.matches("<polyline").count(), 4, "IRS and plain, for both acts");
    assert!(svg.contains("bank: bug found") && svg.contains("bank_fixed: verified"));
    assert_eq!(svg.matches('<').count(), svg.matches('>').count());
    assert!(!svg.replace("&amp;", "").replace("&lt;", "").replace("&gt;", "").contains('&'));
    // Nothing of the demo's is left running.
    for name in ["bank", "bank_fixed"] {
        let prog = dir.join(name);
        let st = run(Command::new(irs()).args(["status", "--json"]).arg(&prog), None, T).unwrap();
        let st: serde_json::Value = serde_json::from_str(st.stdout.trim()).unwrap();
        assert_eq!(st["worker_running"], false, "{st}");
        assert!(st["inputs"].as_array().unwrap().iter().all(|i| i["status"] != "running"), "{st}");
        let _ = run(Command::new(irs()).arg("forget").arg(&prog), None, T);
    }
}
