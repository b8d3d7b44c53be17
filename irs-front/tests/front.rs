//! The `irs` front on its own (no `irs-full` needed): how it is linked, and a run it cannot
//! start. (Also what makes `cargo test --workspace` build `target/<profile>/irs`, which the
//! root package's end-to-end tests run.)

use std::process::{Command, Stdio};

fn irs() -> &'static str {
    env!("CARGO_BIN_EXE_irs")
}

#[test]
fn the_front_is_linked_statically() {
    // No program header of type PT_INTERP (3): no dynamic loader runs before the front.
    let b = std::fs::read(irs()).unwrap();
    assert_eq!(&b[..4], b"\x7fELF");
    let u = |at: usize, n: usize| b[at..at + n].iter().rev().fold(0u64, |v, &x| v << 8 | x as u64) as usize;
    let (phoff, phentsize, phnum) = (u(0x20, 8), u(0x36, 2), u(0x38, 2));
    let interp = (0..phnum).any(|i| u(phoff + i * phentsize, 4) == 3);
    assert!(!interp, "{} asks for a dynamic loader (build.rs found no static C library?)", irs());
}

#[test]
fn a_program_that_does_not_exist_is_one_line_and_exit_2() {
    let store = std::env::temp_dir().join(format!("irs-front-test-{}", std::process::id()));
    let out = Command::new(irs()).args(["run", "--", "/nonexistent/irs-front-test"]).env("IRS_STORE", &store).stdin(Stdio::null()).output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.starts_with("irs: run: ") && err.contains("/nonexistent/irs-front-test"), "{err}");
    let _ = std::fs::remove_dir_all(&store);
}
