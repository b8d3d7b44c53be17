//! A serialised run (an input nothing covers yet, DESIGN §4's default reaction) lets the other
//! threads go first where a thread polls with `sched_yield`, as it does at a sleep: real clang,
//! the real pass, `irs run` with no prefix in force.

mod common;

use common::*;
use std::process::Command;
use std::time::Duration;

#[test]
fn a_thread_polling_with_sched_yield_does_not_keep_the_serial_turn() {
    let d = scratch("serial_polling");
    let src = repo().join("tests/programs/serial/yield_poll.c");
    irs_cc(&d, &["-O1", "-pthread", "-o", "yield_poll", &src.display().to_string()]).unwrap();
    let store = d.join("store");
    for _ in 0..5 {
        let o = run(Command::new(irs()).args(["run", "--wait-limit", "0", "--", "./yield_poll"]).env("IRS_STORE", &store).current_dir(&d), None, Duration::from_secs(60)).unwrap();
        assert_eq!(o.how(), "exit 0", "{}{}", o.stdout, o.stderr);
        assert!(o.stdout.contains("seen=1"), "{}", o.stdout);
    }
    let _ = run(Command::new(irs()).args(["forget", "./yield_poll"]).env("IRS_STORE", &store).current_dir(&d), None, Duration::from_secs(60));
}
