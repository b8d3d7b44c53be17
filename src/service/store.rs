//! Where each input's verification lives (DESIGN §4 "Inputs"): one directory per program and input,
//! `<root>/<program id>/<input key>/`, holding the input (`input.json`, `stdin`), the verifier's
//! state (`state.json`), its log (`verifier.log`) and the schedules of the bugs it found (`bugs/`);
//! the input's prefix is the shared-memory segment `/dev/shm/irs-<id>-<key>`, which running
//! programs map. The root is `$IRS_STORE`, else `$TMPDIR/irs-<uid>` (mode 0700).

use super::input::{Input, InputKey};
use shared_proto::ProgramId;
use std::path::{Path, PathBuf};

#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    #[error("cannot write {path}: {reason}")]
    Write { path: String, reason: String },
    #[error("cannot read {path}: {reason}")]
    Read { path: String, reason: String },
    #[error("no input {key} of this program has been seen (`irs status PROGRAM` lists them)")]
    NoSuchInput { key: InputKey },
}

fn write_err(p: &Path) -> impl FnOnce(std::io::Error) -> StoreError + '_ {
    move |e| StoreError::Write { path: p.display().to_string(), reason: e.to_string() }
}

/// The store's root directory.
pub fn root() -> PathBuf {
    if let Some(r) = std::env::var_os("IRS_STORE").filter(|r| !r.is_empty()) {
        return PathBuf::from(r);
    }
    // SAFETY: getuid has no preconditions.
    std::env::temp_dir().join(format!("irs-{}", unsafe { libc::getuid() }))
}

/// Everything irs keeps about one program.
#[derive(Clone, Debug)]
pub struct ProgramStore {
    pub id: ProgramId,
    pub dir: PathBuf,
}

impl ProgramStore {
    pub fn of(id: ProgramId) -> ProgramStore {
        ProgramStore { id, dir: root().join(id.to_string()) }
    }

    /// Create the directories (private to this user).
    pub fn create(&self) -> Result<(), StoreError> {
        use std::os::unix::fs::DirBuilderExt;
        std::fs::DirBuilder::new().recursive(true).mode(0o700).create(&self.dir).map_err(write_err(&self.dir))
    }

    pub fn input(&self, key: InputKey) -> InputStore {
        InputStore { program: self.id, key, dir: self.dir.join(key.to_string()) }
    }

    /// Every input of the program seen so far, oldest first.
    pub fn inputs(&self) -> Vec<InputStore> {
        let mut out: Vec<(std::time::SystemTime, InputStore)> = std::fs::read_dir(&self.dir)
            .into_iter()
            .flatten()
            .flatten()
            .filter_map(|e| {
                let key: InputKey = e.file_name().to_str()?.parse().ok()?;
                let s = self.input(key);
                let made = std::fs::metadata(s.dir.join("input.json")).and_then(|m| m.modified()).ok()?;
                Some((made, s))
            })
            .collect();
        out.sort_by_key(|(t, s)| (*t, s.key));
        out.into_iter().map(|(_, s)| s).collect()
    }

    /// The queue of inputs waiting for verification (see `queue`).
    pub fn queue_dir(&self) -> PathBuf {
        self.dir.join("queue")
    }

    /// The worker's lock file: held (flock) by the one worker that verifies queued inputs.
    pub fn worker_lock(&self) -> PathBuf {
        self.dir.join("worker.lock")
    }

    pub fn worker_log(&self) -> PathBuf {
        self.dir.join("worker.log")
    }
}

/// Everything irs keeps about one input of a program.
#[derive(Clone, Debug)]
pub struct InputStore {
    pub program: ProgramId,
    pub key: InputKey,
    pub dir: PathBuf,
}

impl InputStore {
    pub fn input_file(&self) -> PathBuf {
        self.dir.join("input.json")
    }
    pub fn stdin_file(&self) -> PathBuf {
        self.dir.join("stdin")
    }
    pub fn state_file(&self) -> PathBuf {
        self.dir.join("state.json")
    }
    pub fn log_file(&self) -> PathBuf {
        self.dir.join("verifier.log")
    }
    pub fn bugs_dir(&self) -> PathBuf {
        self.dir.join("bugs")
    }
    /// The captures of the files the input's verification read (`shared_proto::input_files`).
    pub fn files_dir(&self) -> PathBuf {
        self.dir.join("files")
    }
    pub fn captures(&self) -> shared_proto::input_files::FileCaptures {
        shared_proto::input_files::FileCaptures::new(self.files_dir())
    }
    /// The input's prefix: a segment in shared memory, mapped by running programs.
    pub fn segment(&self) -> PathBuf {
        PathBuf::from(format!("/dev/shm/irs-{}-{}", self.program, self.key))
    }

    pub fn load(&self) -> Result<Input, StoreError> {
        let path = self.input_file();
        let bytes = std::fs::read(&path).map_err(|e| {
            if e.kind() == std::io::ErrorKind::NotFound {
                StoreError::NoSuchInput { key: self.key }
            } else {
                StoreError::Read { path: path.display().to_string(), reason: e.to_string() }
            }
        })?;
        serde_json::from_slice(&bytes).map_err(|e| StoreError::Read { path: path.display().to_string(), reason: e.to_string() })
    }

    /// The captured standard input (empty when there is none).
    pub fn stdin(&self) -> Result<Vec<u8>, StoreError> {
        match std::fs::read(self.stdin_file()) {
            Ok(b) => Ok(b),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(Vec::new()),
            Err(e) => Err(StoreError::Read { path: self.stdin_file().display().to_string(), reason: e.to_string() }),
        }
    }

    /// Does this directory hold exactly `input` (and `stdin`)? Keys are hashes: the whole input
    /// is compared before a verification is taken to cover it.
    pub fn holds(&self, input: &Input, stdin: &[u8]) -> bool {
        self.load().is_ok_and(|i| i.same_as(input)) && self.stdin().is_ok_and(|s| s == stdin)
    }

    /// For an input read from this directory (its fields matched, its standard input by length
    /// and hash only): does it hold these bytes of standard input? A hash collision is an
    /// error, as in [`InputStore::save`].
    pub fn holds_stdin(&self, stdin: &[u8]) -> Result<(), StoreError> {
        if stdin.is_empty() || self.stdin().is_ok_and(|s| s == stdin) {
            return Ok(());
        }
        Err(StoreError::Write { path: self.dir.display().to_string(), reason: "it holds another input with the same key (a hash collision); `irs forget` it first".into() })
    }

    /// Keep the input (and its standard input), written completely before `input.json`
    /// appears: a reader never finds half an input. A directory holding another input with the
    /// same key (a hash collision) is an error, never overwritten.
    pub fn save(&self, input: &Input, stdin: &[u8]) -> Result<(), StoreError> {
        use std::os::unix::fs::DirBuilderExt;
        if self.input_file().exists() {
            if self.holds(input, stdin) {
                return Ok(());
            }
            return Err(StoreError::Write { path: self.dir.display().to_string(), reason: "it holds another input with the same key (a hash collision); `irs forget` it first".into() });
        }
        std::fs::DirBuilder::new().recursive(true).mode(0o700).create(&self.dir).map_err(write_err(&self.dir))?;
        if !stdin.is_empty() {
            write_atomically(&self.stdin_file(), stdin)?;
        }
        let json = serde_json::to_vec_pretty(input).map_err(|e| StoreError::Write { path: self.input_file().display().to_string(), reason: e.to_string() })?;
        write_atomically(&self.input_file(), &json)
    }

    /// Forget the input: its directory and its segment.
    pub fn remove(&self) {
        let _ = std::fs::remove_file(self.segment());
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// Write a file so that readers see the old contents or the new, never a part: a temporary
/// file beside it, then a rename. A full disk is reported, and the temporary file removed.
pub fn write_atomically(path: &Path, bytes: &[u8]) -> Result<(), StoreError> {
    let tmp = path.with_extension(format!("tmp{}", std::process::id()));
    let result = std::fs::write(&tmp, bytes).and_then(|_| std::fs::rename(&tmp, path));
    if result.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    result.map_err(write_err(path))
}
