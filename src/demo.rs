//! `irs demo`: the main job on a bundled example (README). Until the verifier and ENFORCE
//! exist, it shows the toolchain: instrument with `irs cc`, run the binary as is (OFF mode),
//! record a run, and print the trace.

use crate::record;
use crate::trace_view;
use std::path::{Path, PathBuf};
use std::process::Command;

const EXAMPLE: &str = include_str!("../examples/bank.c");

#[derive(Debug, thiserror::Error)]
pub enum DemoError {
    #[error("cannot prepare {0}: {1}")]
    Io(String, std::io::Error),
    #[error("irs cc failed: {0}")]
    Cc(String),
    #[error(transparent)]
    Record(#[from] record::RecordError),
}

fn step(n: u32, what: &str) {
    println!("\n== {n}. {what}");
}

/// Run the demo in `dir` (created if needed); prints as it goes.
pub fn run(dir: &Path) -> Result<(), DemoError> {
    let io = |p: &Path| {
        let p = p.display().to_string();
        move |e| DemoError::Io(p, e)
    };
    std::fs::create_dir_all(dir).map_err(io(dir))?;
    let src = dir.join("bank.c");
    std::fs::write(&src, EXAMPLE).map_err(io(&src))?;
    let exe = dir.join("bank");
    let sites = dir.join("bank.sites");
    let trace = dir.join("bank.trace");
    let s = |p: &PathBuf| p.display().to_string();

    step(1, &format!("irs cc -O2 -o {} {} --site-report {}", s(&exe), s(&src), s(&sites)));
    let args = ["-O2".to_string(), "-o".into(), s(&exe), s(&src), "--site-report".into(), s(&sites)];
    match irs_instrument::driver::run_cc(&args) {
        Ok(0) => {}
        Ok(code) => return Err(DemoError::Cc(format!("clang exited with {code}"))),
        Err(e) => return Err(DemoError::Cc(e.to_string())),
    }
    let report = std::fs::read_to_string(&sites).map_err(io(&sites))?;
    for line in report.lines().take(12) {
        println!("  {line}");
    }
    println!("  ... (full report in {})", s(&sites));

    step(2, "run the instrumented binary directly (OFF mode: behaves like the plain build)");
    let out = Command::new(&exe).output().map_err(io(&exe))?;
    print!("  {}", String::from_utf8_lossy(&out.stdout));

    step(3, &format!("irs record --out {} -- {}", s(&trace), s(&exe)));
    let r = record::record(&trace, &s(&exe), &[])?;
    println!("  {} events, {} threads, outcome {}", r.trace.events.len(), r.trace.threads.len(), r.trace.outcome);

    step(4, &format!("irs trace show {}", s(&trace)));
    print!("{}", trace_view::table(&r.trace));
    println!("\nDone. The files are in {}.", dir.display());
    Ok(())
}
