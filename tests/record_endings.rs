//! A recorded run that ends badly keeps its whole trace (DESIGN §4's RECORD; docs/src/process-end.md):
//! several threads failing at once each write a snapshot and abort, and the trace left is the
//! newest, whole, with no temporary file beside it. Built with the real `irs cc`, recorded with
//! the real `irs record`.

mod common;

use common::*;
use std::process::Command;

#[test]
fn threads_failing_together_leave_one_whole_trace() {
    let dir = scratch("record-endings");
    std::fs::copy(repo().join("tests/programs/endings/fail_together.c"), dir.join("fail_together.c")).unwrap();
    irs_cc(&dir, &["fail_together.c", "-o", "fail_together", "-lpthread"]).unwrap();
    // The race needs the threads' aborts to overlap the writes: it lost the trace in about a
    // third of the runs before writes were numbered and the abort's handler waited for them.
    for i in 0..25 {
        let out = run(Command::new(irs()).args(["record", "--out", "t.trace", "--", "./fail_together"]).current_dir(&dir), None, T).unwrap();
        assert!(out.stderr.contains("outcome violation assert"), "run {i}: the trace was not kept whole:\n{}", out.stderr);
        let stray: Vec<_> = std::fs::read_dir(&dir).unwrap().flatten().map(|e| e.file_name().to_string_lossy().into_owned()).filter(|n| n.contains(".tmp")).collect();
        assert!(stray.is_empty(), "run {i}: temporary files left: {stray:?}");
    }
}
