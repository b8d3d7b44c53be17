//! Where each input's verification lives (DESIGN §4 "Inputs"): one directory per program and input,
//! `<root>/<program id>/<input key>/`, holding the input (`input.json`, `stdin`), the verifier's
//! state (`state.json`), its log (`verifier.log`) and the schedules of the bugs it found (`bugs/`);
//! the input's prefix is the shared-memory segment `/dev/shm/irs-<id>-<key>-<tag>`, which running
//! programs map, where the tag names this store's directory of the input (its device, inode and
//! birth time): a segment outlives the store that made it (a store deleted, a run killed before
//! `irs forget`, another `IRS_STORE`), and a run must never take another store's verification
//! for its own. The root is `$IRS_STORE`, else `$TMPDIR/irs-<uid>` (mode 0700).
//!
//! A program's directory made by this version holds an index, `bases/<base key>`: the keys of
//! the inputs with that base (the same arguments, selected variables, standard input and working
//! directory, `Input::base_key`), one a line, each appended before its `input.json` is written.
//! `irs run` finds the candidate inputs of a run there, one small file, instead of reading the
//! directory and every input in it (`files::find`). The index is complete from the directory's
//! creation on (it is created with it, atomically) or absent (a directory made by an earlier
//! version): then every input is read, as before.
//!
//! Beside `input.json` (for people and tools), `input.bin` holds the same input in the project's
//! binary encoding, written first: `irs run` reads it before every run, and parsing the JSON
//! (the environment is in it) cost more than everything else `irs run` reads. An input without
//! it (an earlier version's), or whose encoding does not decode (another version's), is read from
//! its JSON.

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

/// What `input.bin` starts with: the encoding's version (another version's is not decoded, and
/// its JSON is read instead). Change it whenever `Input` or a type in it changes: bincode does
/// not describe the fields it writes.
const INPUT_BIN_MAGIC: &[u8] = b"IRSINPUT1\n";

fn encode_input(input: &Input) -> Vec<u8> {
    [INPUT_BIN_MAGIC, &shared_proto::codec::encode(input)].concat()
}

fn decode_input(bytes: &[u8]) -> Option<Input> {
    shared_proto::codec::decode(bytes.strip_prefix(INPUT_BIN_MAGIC)?).ok()
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

    /// Create the directories (private to this user). A new program directory appears with its
    /// index of bases (see the module's documentation) or not at all: it is made under a
    /// temporary name and renamed.
    pub fn create(&self) -> Result<(), StoreError> {
        use std::os::unix::fs::DirBuilderExt;
        if self.dir.is_dir() {
            return Ok(());
        }
        let parent = self.dir.parent().unwrap_or(Path::new("/"));
        std::fs::DirBuilder::new().recursive(true).mode(0o700).create(parent).map_err(write_err(parent))?;
        let tmp = parent.join(format!(".{}.tmp{}", self.id, std::process::id()));
        let made = std::fs::DirBuilder::new().recursive(true).mode(0o700).create(tmp.join("bases")).and_then(|_| std::fs::rename(&tmp, &self.dir));
        if made.is_err() {
            let _ = std::fs::remove_dir_all(&tmp);
            // Made by another `irs run` meanwhile (the rename found it there): theirs is as good.
            if !self.dir.is_dir() {
                return made.map_err(write_err(&self.dir));
            }
        }
        Ok(())
    }

    /// The index of the inputs by base (see the module's documentation).
    pub fn bases_dir(&self) -> PathBuf {
        self.dir.join("bases")
    }

    /// The inputs whose base key is `base`, oldest first, as [`ProgramStore::inputs`] would list
    /// those among its inputs, read from the index; `None` when the directory has no index.
    pub fn inputs_of_base(&self, base: InputKey) -> Option<Vec<InputStore>> {
        let keys = match std::fs::read_to_string(self.bases_dir().join(base.to_string())) {
            Ok(text) => text.lines().filter_map(|l| l.parse().ok()).collect(),
            Err(_) if self.bases_dir().is_dir() => Vec::new(),
            Err(_) => return None,
        };
        Some(self.oldest_first(keys))
    }

    pub fn input(&self, key: InputKey) -> InputStore {
        InputStore { program: self.id, key, dir: self.dir.join(key.to_string()) }
    }

    /// Every input of the program seen so far, oldest first.
    pub fn inputs(&self) -> Vec<InputStore> {
        let keys = std::fs::read_dir(&self.dir).into_iter().flatten().flatten().filter_map(|e| e.file_name().to_str()?.parse().ok()).collect();
        self.oldest_first(keys)
    }

    /// The inputs of these keys that hold an input (once each), by the time their `input.json`
    /// was written, then by key. One input needs no ordering.
    fn oldest_first(&self, mut keys: Vec<InputKey>) -> Vec<InputStore> {
        keys.sort();
        keys.dedup();
        if let [key] = keys[..] {
            let s = self.input(key);
            return if s.input_file().is_file() { vec![s] } else { Vec::new() };
        }
        let mut out: Vec<(std::time::SystemTime, InputStore)> = keys
            .into_iter()
            .filter_map(|key| {
                let s = self.input(key);
                let made = std::fs::metadata(s.input_file()).and_then(|m| m.modified()).ok()?;
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
    /// The input in binary (see the module's documentation).
    fn input_bin(&self) -> PathBuf {
        self.dir.join("input.bin")
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
    /// The input's prefix: a segment in shared memory, mapped by running programs, named for this
    /// store's directory of the input (see the module's documentation; the directory exists
    /// once the input is saved, before anything publishes or maps its prefix).
    pub fn segment(&self) -> PathBuf {
        PathBuf::from(format!("/dev/shm/irs-{}-{}-{}", self.program, self.key, directory_tag(&self.dir)))
    }

    pub fn load(&self) -> Result<Input, StoreError> {
        if let Some(input) = std::fs::read(self.input_bin()).ok().and_then(|b| decode_input(&b)) {
            return Ok(input);
        }
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
        self.index(input)?;
        write_atomically(&self.input_bin(), &encode_input(input))?;
        let json = serde_json::to_vec_pretty(input).map_err(|e| StoreError::Write { path: self.input_file().display().to_string(), reason: e.to_string() })?;
        write_atomically(&self.input_file(), &json)
    }

    /// List the input under its base in its program's index, if the program has one (see the
    /// module's documentation), before its `input.json` exists: one line appended, which
    /// concurrent writers cannot interleave.
    fn index(&self, input: &Input) -> Result<(), StoreError> {
        use std::io::Write;
        let Some(bases) = self.dir.parent().map(|p| p.join("bases")).filter(|b| b.is_dir()) else { return Ok(()) };
        let path = bases.join(input.base_key().to_string());
        std::fs::OpenOptions::new()
            .append(true)
            .create(true)
            .open(&path)
            .and_then(|mut f| f.write_all(format!("{}\n", self.key).as_bytes()))
            .map_err(write_err(&path))
    }

    /// Forget the input: its directory and its segment.
    pub fn remove(&self) {
        let _ = std::fs::remove_file(self.segment());
        let _ = std::fs::remove_file(crate::service::anchor::anchor_file(&self.segment()));
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// What tells this directory from any other that had its path before or has it elsewhere: a
/// hash of its device, inode and birth time (`statx`; 0 where the file system keeps none), as
/// 16 hex digits; `0` when it does not exist.
fn directory_tag(dir: &Path) -> String {
    use std::os::unix::fs::MetadataExt;
    let Ok(m) = std::fs::metadata(dir) else { return "0".into() };
    let born = m.created().ok().and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok()).map_or(0, |d| d.as_nanos() as u64);
    let mut h = shared_proto::hash::StableHasher::default();
    for v in [m.dev(), m.ino(), born] {
        h.write_u64(v);
    }
    format!("{:016x}", h.finish())
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::service::input::{EnvSelection, FileContent, PinnedFile};

    #[test]
    fn an_input_is_read_from_its_binary_twin_and_from_its_json_without_one() {
        let root = std::env::temp_dir().join(format!("irs-store-bin-test-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&root);
        let program = ProgramStore { id: ProgramId(9), dir: root.clone() };
        program.create().unwrap();
        let input = Input::new(&["-c".into(), "x y".into()], vec![("LANG".into(), "C \"quoted\"".into())], EnvSelection::Only(vec!["LANG".into()]), b"bytes");
        let store = program.input(input.key());
        store.save(&input, b"bytes").unwrap();
        assert!(store.input_bin().is_file() && store.input_file().is_file());
        assert_eq!(store.load().unwrap(), input);
        // Another version's encoding, or none: the JSON.
        std::fs::write(store.input_bin(), b"IRSINPUT0\nsomething else").unwrap();
        assert_eq!(store.load().unwrap(), input);
        std::fs::remove_file(store.input_bin()).unwrap();
        assert_eq!(store.load().unwrap(), input);
        assert!(store.holds(&input, b"bytes"));
        let _ = std::fs::remove_dir_all(&root);
    }

    #[test]
    fn a_new_program_directory_indexes_its_inputs_by_base_and_an_old_one_does_not() {
        let root = std::env::temp_dir().join(format!("irs-store-test-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&root);
        let program = ProgramStore { id: ProgramId(7), dir: root.join("new") };
        assert!(program.inputs_of_base(InputKey(1)).is_none(), "no directory, no index");
        program.create().unwrap();
        program.create().unwrap();
        let base = Input::new(&["a".into()], vec![("LANG".into(), "C".into())], EnvSelection::Read, b"");
        let pinned = Input { files: vec![PinnedFile { path: "/etc/x".into(), content: FileContent::Absent }], ..base.clone() };
        let other = Input::new(&["b".into()], Vec::new(), EnvSelection::Read, b"");
        for i in [&base, &pinned, &other] {
            program.input(i.key()).save(i, b"").unwrap();
        }
        program.input(base.key()).save(&base, b"").unwrap();
        let keys = |v: Option<Vec<InputStore>>| v.map(|v| v.into_iter().map(|s| s.key).collect::<Vec<_>>());
        let (mut found, mut both) = (keys(program.inputs_of_base(base.base_key())).unwrap(), vec![base.key(), pinned.key()]);
        found.sort();
        both.sort();
        assert_eq!(found, both);
        assert_eq!(keys(program.inputs_of_base(other.base_key())), Some(vec![other.key()]));
        assert_eq!(keys(program.inputs_of_base(InputKey(1))), Some(Vec::new()));
        // The index lists what the directory holds, in its order.
        let listed: Vec<InputKey> = program.inputs().into_iter().filter(|s| s.key != other.key()).map(|s| s.key).collect();
        assert_eq!(keys(program.inputs_of_base(base.base_key())), Some(listed));
        // A directory made by an earlier version (no index): every input is read instead.
        let old = ProgramStore { id: ProgramId(8), dir: root.join("old") };
        std::fs::create_dir_all(&old.dir).unwrap();
        old.create().unwrap();
        old.input(base.key()).save(&base, b"").unwrap();
        assert!(old.inputs_of_base(base.base_key()).is_none());
        assert_eq!(old.inputs().len(), 1);
        std::fs::remove_dir_all(&root).unwrap();
    }
}
