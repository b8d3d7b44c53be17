//! Helpers shared by the end-to-end tests: real clang, the real `irs` binary, real processes.
#![allow(dead_code)]

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitStatus, Stdio};
use std::time::{Duration, Instant};

/// The `irs` front, built by the `irs-front` package beside this package's `irs-full`
/// (`cargo test --workspace` and `cargo build --release --workspace` build both).
pub fn irs() -> PathBuf {
    let irs = Path::new(env!("CARGO_BIN_EXE_irs-full")).with_file_name("irs");
    assert!(irs.is_file(), "{} is missing: build the workspace (`cargo build --release --workspace`)", irs.display());
    irs
}

pub fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

pub fn clang() -> String {
    std::env::var("IRS_CLANG").unwrap_or_else(|_| "clang-14".to_string())
}

/// A fresh scratch directory under target/ (kept for inspection after a failure).
pub fn scratch(name: &str) -> PathBuf {
    let d = repo().join("target").join("test-scratch").join(name);
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// A C program whose `threads` threads each increment a shared counter under one mutex `iters`
/// times; main joins them and exits 0 exactly when the count is right.
pub fn mutex_counter_source(threads: usize, iters: usize) -> String {
    format!(
        r#"#include <pthread.h>
pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
int x;
void *w(void *p) {{ for (int i = 0; i < {iters}; i++) {{ pthread_mutex_lock(&m); x++; pthread_mutex_unlock(&m); }} return p; }}
int main(void) {{
  pthread_t t[{threads}];
  for (int i = 0; i < {threads}; i++) pthread_create(&t[i], 0, w, 0);
  for (int i = 0; i < {threads}; i++) pthread_join(t[i], 0);
  return x == {total} ? 0 : 1;
}}
"#,
        total = threads * iters
    )
}

pub struct Output {
    pub status: ExitStatus,
    pub stdout: String,
    pub stderr: String,
}

impl Output {
    /// `exit N` or `signal N`.
    pub fn how(&self) -> String {
        use std::os::unix::process::ExitStatusExt;
        match (self.status.code(), self.status.signal()) {
            (Some(c), _) => format!("exit {c}"),
            (None, Some(s)) => format!("signal {s}"),
            _ => "unknown".into(),
        }
    }
}

/// Run a command with optional stdin; kill it after `timeout`.
pub fn run(cmd: &mut Command, stdin: Option<&str>, timeout: Duration) -> Result<Output, String> {
    let mut child = cmd
        .stdin(if stdin.is_some() { Stdio::piped() } else { Stdio::null() })
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| format!("cannot run {cmd:?}: {e}"))?;
    if let Some(input) = stdin {
        let mut s = child.stdin.take().unwrap();
        let _ = s.write_all(input.as_bytes());
    }
    let out_pipe = child.stdout.take().unwrap();
    let err_pipe = child.stderr.take().unwrap();
    let out_t = std::thread::spawn(move || std::io::read_to_string(out_pipe).unwrap_or_default());
    let err_t = std::thread::spawn(move || std::io::read_to_string(err_pipe).unwrap_or_default());
    let start = Instant::now();
    let status = loop {
        if let Some(st) = child.try_wait().map_err(|e| e.to_string())? {
            break st;
        }
        if start.elapsed() > timeout {
            let _ = child.kill();
            let _ = child.wait();
            return Err(format!("{cmd:?} did not finish within {timeout:?}"));
        }
        std::thread::sleep(Duration::from_millis(5));
    };
    Ok(Output { status, stdout: out_t.join().unwrap(), stderr: err_t.join().unwrap() })
}

pub const T: Duration = Duration::from_secs(60);

/// `irs cc ARGS` in `dir`; Err with clang's/irs's stderr on failure.
pub fn irs_cc(dir: &Path, args: &[&str]) -> Result<Output, String> {
    let out = run(Command::new(irs()).arg("cc").args(args).current_dir(dir), None, T)?;
    if out.status.success() {
        Ok(out)
    } else {
        Err(format!("irs cc {args:?} failed ({}): {}", out.how(), out.stderr))
    }
}

pub fn plain_cc(dir: &Path, args: &[&str]) -> Result<Output, String> {
    let out = run(Command::new(clang()).args(args).current_dir(dir), None, T)?;
    if out.status.success() {
        Ok(out)
    } else {
        Err(format!("clang {args:?} failed: {}", out.stderr))
    }
}

/// The corpus programs, `tests/programs/*.c`, sorted.
pub fn corpus_programs() -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(repo().join("tests/programs"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "c"))
        .collect();
    v.sort();
    v
}

/// A corpus program built with `irs cc -O2` into `dir`, with the arguments and stdin its
/// `.expect` file gives.
pub struct BuiltCorpusProgram {
    pub name: String,
    pub exe: PathBuf,
    pub args: Vec<String>,
    pub stdin: Vec<u8>,
}

pub fn build_corpus_program(dir: &Path, src: &Path) -> BuiltCorpusProgram {
    let name = src.file_stem().unwrap().to_string_lossy().into_owned();
    let expect = std::fs::read_to_string(src.with_extension("expect")).unwrap();
    let field = |k: &str| expect.lines().find_map(|l| l.strip_prefix(k)).map(|v| v.split(" #").next().unwrap().trim().to_string());
    let args: Vec<String> = field("args:").map(|a| a.split_whitespace().map(String::from).collect()).unwrap_or_default();
    let stdin = field("stdin:").map(|s| format!("{}\n", s.replace("\\n", "\n"))).unwrap_or_default();
    let exe = dir.join(&name);
    irs_cc(dir, &["-O2", "-pthread", "-w", "-o", exe.to_str().unwrap(), src.to_str().unwrap()]).unwrap();
    BuiltCorpusProgram { name, exe, args, stdin: stdin.into_bytes() }
}

/// Build every corpus program into `dir` and run `check` on each, two at a time; panics with
/// every failure `check` reported (`Err`).
pub fn check_corpus_in_parallel(dir: &Path, check: impl Fn(BuiltCorpusProgram) -> Result<(), String> + Sync) {
    let programs = corpus_programs();
    let failures = std::sync::Mutex::new(Vec::new());
    std::thread::scope(|s| {
        for chunk in programs.chunks(programs.len().div_ceil(2)) {
            let (failures, check) = (&failures, &check);
            s.spawn(move || {
                for src in chunk {
                    let p = build_corpus_program(dir, src);
                    let name = p.name.clone();
                    if let Err(e) = check(p) {
                        failures.lock().unwrap().push(format!("{name}: {e}"));
                    }
                }
            });
        }
    });
    let f = failures.into_inner().unwrap();
    assert!(f.is_empty(), "{}", f.join("\n"));
}
