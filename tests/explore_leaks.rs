//! The executor leaves nothing behind (DESIGN §7). In its own test binary: it counts this
//! process's descriptors, which tests running in parallel threads would disturb.

mod common;

use common::*;
use irs_verifier::executor::{Executor, Options};
use shared_proto::Outcome;
use std::path::Path;
use std::time::Duration;

/// The tests here count this process's descriptors and children: one at a time.
static SERIAL: std::sync::Mutex<()> = std::sync::Mutex::new(());

fn count_fds(pid: u32) -> usize {
    std::fs::read_dir(format!("/proc/{pid}/fd")).map(|d| d.count()).unwrap_or(0)
}

/// The memory mappings of a process, as `/proc/PID/maps` lists them.
fn mappings(pid: u32) -> Vec<String> {
    std::fs::read_to_string(format!("/proc/{pid}/maps")).unwrap_or_default().lines().map(|l| l.to_string()).collect()
}

fn children_of(pid: u32) -> Vec<u32> {
    let mut out = Vec::new();
    for e in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(p) = e.file_name().to_string_lossy().parse::<u32>() else { continue };
        if let Ok(stat) = std::fs::read_to_string(format!("/proc/{p}/stat")) {
            let after = stat.rsplit_once(')').map(|x| x.1).unwrap_or("");
            if after.split_whitespace().nth(1).and_then(|pp| pp.parse::<u32>().ok()) == Some(pid) {
                out.push(p);
            }
        }
    }
    out
}

#[test]
fn ten_thousand_runs_leak_no_process_fd_or_shared_memory() {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let dir = scratch("explore/leaks");
    std::fs::write(dir.join("race.c"), "#include <assert.h>\n#include <pthread.h>\nint x;\nvoid *t(void *a) { int v = x; x = v + 1; return a; }\nint main(void) { pthread_t a, b; pthread_create(&a, 0, t, 0); pthread_create(&b, 0, t, 0); pthread_join(a, 0); pthread_join(b, 0); assert(x == 2); return 0; }\n").unwrap();
    irs_cc(&dir, &["-O1", "-pthread", "-o", "race", "race.c"]).unwrap();
    let exe = dir.join("race");
    let shm_before: Vec<_> = std::fs::read_dir("/dev/shm").map(|d| d.flatten().map(|e| e.file_name()).collect()).unwrap_or_default();
    let me = std::process::id();
    let fds_before = count_fds(me);
    let server_pid;
    {
        let mut ex = Executor::start(&exe, &[], Options::default()).unwrap();
        let started = *children_of(me).iter().find(|&&p| std::fs::read_link(format!("/proc/{p}/exe")).is_ok_and(|e| e == exe)).expect("the program is our child");
        // Isolated (docs/src/sandbox.md), the process we started stays outside as a keeper whose one
        // child is the server, process 1 of the executions' process-id namespace.
        let keeper_child = children_of(started);
        let server = match keeper_child.as_slice() {
            [c] if std::fs::read_to_string(format!("/proc/{c}/status")).is_ok_and(|st| st.lines().any(|l| l.starts_with("NSpid:") && l.ends_with("\t1"))) => *c,
            _ => started,
        };
        server_pid = server;
        let first = ex.run_random(&[], 0).unwrap();
        let server_fds = count_fds(server);
        // The persistent worker runs the executions: the server's one child.
        let worker = children_of(server);
        assert_eq!(worker.len(), 1, "one persistent worker");
        let worker = worker[0];
        let (worker_fds, worker_maps) = (count_fds(worker), mappings(worker));
        for i in 0..10_000u64 {
            let r = ex.run_random(&[], i).unwrap();
            assert!(matches!(r.trace.outcome, Outcome::Exit(0) | Outcome::Violation { .. }));
        }
        assert_eq!(count_fds(server), server_fds, "the server's descriptors stay the same");
        assert_eq!(children_of(server), [worker], "the same worker ran every execution");
        assert_eq!(count_fds(worker), worker_fds, "the worker's descriptors stay the same");
        assert_eq!(mappings(worker), worker_maps, "the worker's memory mappings stay the same");
        assert!(children_of(worker).is_empty(), "no execution outlives its run");
        let _ = first;
    }
    std::thread::sleep(Duration::from_millis(100));
    assert!(!Path::new(&format!("/proc/{server_pid}")).exists() || std::fs::read_to_string(format!("/proc/{server_pid}/stat")).is_ok_and(|s| s.contains(") Z")), "the server is gone");
    assert_eq!(count_fds(me), fds_before, "the executor closed everything it opened");
    let shm_after: Vec<_> = std::fs::read_dir("/dev/shm").map(|d| d.flatten().map(|e| e.file_name()).collect()).unwrap_or_default();
    // Prefix segments (`irs-<program id>[-<input>]`) are published by verifiers, never by the
    // executor: a background verifier of an earlier test may publish one meanwhile.
    let published = |n: &std::ffi::OsString| {
        let n = n.to_string_lossy();
        n.strip_prefix("irs-").is_some_and(|r| r.split('-').all(|p| p.len() == 16 && p.bytes().all(|b| b.is_ascii_hexdigit())))
    };
    let left: Vec<_> = shm_after.iter().filter(|n| !shm_before.contains(n) && !published(n)).collect();
    assert!(left.is_empty(), "the executor left shared memory behind: {left:?}");
}

/// Every process below `pid` (children, grandchildren, ...).
fn descendants(pid: u32) -> Vec<u32> {
    let mut out = Vec::new();
    let mut frontier = vec![pid];
    while let Some(p) = frontier.pop() {
        for c in children_of(p) {
            out.push(c);
            frontier.push(c);
        }
    }
    out
}

fn gone(pid: u32) -> bool {
    // Gone, or a zombie waiting for a parent that is itself gone.
    std::fs::read_to_string(format!("/proc/{pid}/stat")).map_or(true, |s| s.contains(") Z"))
}

/// Ctrl-C or kill -9 of `irs explore` in the middle of an execution leaves no fork server and
/// no execution behind.
#[test]
fn interrupting_irs_leaves_no_process_behind() {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let dir = scratch("explore/interrupt");
    std::fs::write(dir.join("hang.c"), "#include <pthread.h>\nvoid *t(void *a) { for (volatile long i = 0;; i++) {} return a; }\nint main(void) { pthread_t x; pthread_create(&x, 0, t, 0); pthread_join(x, 0); return 0; }\n").unwrap();
    irs_cc(&dir, &["-O1", "-pthread", "-o", "hang", "hang.c"]).unwrap();
    for sig in [libc::SIGINT, libc::SIGKILL] {
        let mut cmd = std::process::Command::new(irs());
        cmd.args(["explore", "--random", "100", "--timeout", "60", "--"])
            .arg(dir.join("hang"))
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null());
        // A test run started in the background by a shell without job control inherits SIGINT
        // ignored (and irs, as any program, keeps it so): give irs the disposition a terminal's
        // ^C meets.
        // SAFETY: between fork and exec, `signal` is async-signal-safe and touches only the child.
        unsafe {
            std::os::unix::process::CommandExt::pre_exec(&mut cmd, || {
                libc::signal(libc::SIGINT, libc::SIG_DFL);
                Ok(())
            });
        }
        let mut irs_proc = cmd.spawn().unwrap();
        let pid = irs_proc.id();
        // Wait until the server and an execution run.
        let deadline = std::time::Instant::now() + Duration::from_secs(20);
        let below = loop {
            let d = descendants(pid);
            if d.len() >= 2 {
                break d;
            }
            assert!(std::time::Instant::now() < deadline, "the fork server and an execution never appeared");
            std::thread::sleep(Duration::from_millis(20));
        };
        // SAFETY: signalling our own child process.
        unsafe { libc::kill(pid as i32, sig) };
        let _ = irs_proc.wait();
        let deadline = std::time::Instant::now() + Duration::from_secs(5);
        while !below.iter().all(|&p| gone(p)) {
            assert!(std::time::Instant::now() < deadline, "signal {sig}: processes left behind: {below:?}");
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}
