//! The executor leaves nothing behind (issue 3). In its own test binary: it counts this
//! process's descriptors, which tests running in parallel threads would disturb.

mod common;

use common::*;
use irs_verifier::executor::{Executor, Options};
use shared_proto::Outcome;
use std::path::Path;
use std::time::Duration;

fn count_fds(pid: u32) -> usize {
    std::fs::read_dir(format!("/proc/{pid}/fd")).map(|d| d.count()).unwrap_or(0)
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
        let server = *children_of(me).iter().find(|&&p| std::fs::read_link(format!("/proc/{p}/exe")).is_ok_and(|e| e == exe)).expect("the fork server is our child");
        server_pid = server;
        let first = ex.run_random(&[], 0).unwrap();
        let server_fds = count_fds(server);
        for i in 0..10_000u64 {
            let r = ex.run_random(&[], i).unwrap();
            assert!(matches!(r.trace.outcome, Outcome::Exit(0) | Outcome::Violation { .. }));
        }
        assert_eq!(count_fds(server), server_fds, "the server's descriptors stay the same");
        assert!(children_of(server).is_empty(), "no execution outlives its run");
        let _ = first;
    }
    std::thread::sleep(Duration::from_millis(100));
    assert!(!Path::new(&format!("/proc/{server_pid}")).exists() || std::fs::read_to_string(format!("/proc/{server_pid}/stat")).is_ok_and(|s| s.contains(") Z")), "the server is gone");
    assert_eq!(count_fds(me), fds_before, "the executor closed everything it opened");
    let shm_after: Vec<_> = std::fs::read_dir("/dev/shm").map(|d| d.flatten().map(|e| e.file_name()).collect()).unwrap_or_default();
    assert_eq!(shm_before, shm_after);
}
