//! What a verification covers (DESIGN §4 "Inputs"): one *input* of the program, that is its
//! arguments, its working directory, every byte it reads on standard input, the files it opens
//! for reading (see `files`) and the environment variables it reads (`getenv`,
//! `secure_getenv`; all of them when it reads `environ`; see `shared_proto::input_env`), plus
//! the variables the C library reads for it (locale, time zone, ...). Which variables a
//! program reads is known once its verification has run, like the files it opens: the stored
//! input keeps the whole environment it was made with (its verification runs with it), and a
//! run is on that input when the variables its verification read hold the same values now
//! (`files::find`). `--env all` keys on every variable but irs's own instead, and `--env
//! A,B` on the ones named. An input is named by an [`InputKey`]; each input has its own
//! verification (see `store`).
//!
//! Standard input is captured before `main`: `irs run` reads it to its end (a regular file, a
//! pipe, a socket; at most a capture limit) and serves the program the captured bytes, so the
//! bytes the program reads are the bytes the verification explored, by construction, through
//! a descriptor of the same kind as the original (see [`StdinOrigin`]). A terminal cannot be
//! read ahead, and a stream longer than the limit cannot be captured: such an input is
//! [`StdinCapture::Uncapturable`], and no verification covers it.

use serde::{Deserialize, Serialize};
use shared_proto::hash::StableHasher;
use std::io::Read;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};

/// Standard input larger than this is not captured (`--capture-limit` changes it).
pub const DEFAULT_CAPTURE_LIMIT: u64 = 16 << 20;

/// The name of an input of a program: a hash of what the input is. Two inputs with the same key
/// are also compared whole before a verification is reused (see `Input::same_as`), so a hash
/// collision can never apply one input's verification to another.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub struct InputKey(pub u64);

impl std::fmt::Display for InputKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{:016x}", self.0)
    }
}

impl std::str::FromStr for InputKey {
    type Err = String;
    fn from_str(s: &str) -> Result<InputKey, String> {
        u64::from_str_radix(s.trim(), 16).map(InputKey).map_err(|_| format!("`{s}` is not an input key (16 hexadecimal digits, as `irs status` shows them)"))
    }
}

/// Which environment variables are part of the input.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum EnvSelection {
    /// Every variable but irs's own (`IRS_*`), whether the program reads it or not.
    All,
    /// The variables the program reads (found by its verification), and the ones the C library
    /// reads for it: the default.
    Read,
    /// Only these: the user asserts that the program's behaviour depends on no other.
    Only(Vec<String>),
}

impl EnvSelection {
    /// `read`, `all`, or a comma-separated list of names.
    pub fn parse(text: &str) -> Result<EnvSelection, String> {
        match text.trim() {
            "all" => return Ok(EnvSelection::All),
            "read" => return Ok(EnvSelection::Read),
            _ => {}
        }
        let names: Vec<String> = text.split(',').map(|s| s.trim().to_string()).filter(|s| !s.is_empty()).collect();
        if names.iter().any(|n| n.contains('=')) {
            return Err(format!("--env {text}: names of variables, comma-separated (or `read`, or `all`)"));
        }
        Ok(EnvSelection::Only(names))
    }

    fn selects(&self, name: &str) -> bool {
        match self {
            EnvSelection::All => !is_irs_variable(name),
            EnvSelection::Read => shared_proto::input_env::read_by_the_c_library(name),
            EnvSelection::Only(names) => names.iter().any(|n| n == name),
        }
    }
}

/// irs's own variables (the runtime's mode and prefix): never part of an input.
pub fn is_irs_variable(name: &str) -> bool {
    name.starts_with("IRS_")
}

/// What standard input held.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum StdinContent {
    /// Nothing: `/dev/null` or a closed descriptor (the program gets `/dev/null`).
    Empty,
    /// These many bytes, with this hash (the bytes are kept in the input's directory).
    Bytes { len: u64, hash: u64 },
}

/// What a file held when it was pinned into an input (see `files`).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum FileContent {
    /// There was no file by that name.
    Absent,
    /// These many bytes, with this hash (the bytes are the capture in the input's `files/`).
    Bytes { len: u64, hash: u64 },
}

impl FileContent {
    pub fn of(bytes: Option<&[u8]>) -> FileContent {
        match bytes {
            None => FileContent::Absent,
            Some(b) => FileContent::Bytes { len: b.len() as u64, hash: shared_proto::hash::stable_hash(b) },
        }
    }
}

/// A file the program reads, with what it held, part of the input's identity.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct PinnedFile {
    /// Absolute and normalised (`shared_proto::input_files::normalise`).
    pub path: String,
    pub content: FileContent,
}

/// One input of a program.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Input {
    pub args: Vec<String>,
    /// The environment the program runs with (without `IRS_*`), sorted by name; the key covers
    /// the part `env_selection` selects.
    pub env: Vec<(String, String)>,
    pub env_selection: EnvSelection,
    pub stdin: StdinContent,
    /// The working directory (relative file names are read from it).
    #[serde(default)]
    pub cwd: String,
    /// Files pinned when the input was made: where an earlier verification of the same
    /// arguments, environment and stdin read files that now hold other bytes, the new input is
    /// those files as they are now (sorted by path). Files its own verification reads first are
    /// captured in its `files/` directory and checked by every run, without being pinned here.
    #[serde(default)]
    pub files: Vec<PinnedFile>,
    /// Variables pinned when the input was made (with `EnvSelection::Read`): where an earlier
    /// verification of the same arguments, standard input and working directory read
    /// variables that hold other values now, the new input is those variables as they are now
    /// (`None`: unset), sorted by name. Variables its own verification reads first are kept
    /// with its captures (`shared_proto::input_env`), without being pinned here.
    #[serde(default)]
    pub env_pins: Vec<(String, Option<String>)>,
}

impl Input {
    /// This process's environment as an input's (sorted, without `IRS_*`; names and values that
    /// are not UTF-8 are kept lossily, which only makes two inputs look more different).
    pub fn current_env() -> Vec<(String, String)> {
        let mut env: Vec<(String, String)> = std::env::vars_os()
            .map(|(k, v)| (k.to_string_lossy().into_owned(), v.to_string_lossy().into_owned()))
            .filter(|(k, _)| !is_irs_variable(k))
            .collect();
        env.sort();
        env
    }

    /// The input of a run with these arguments, environment and standard input, in this
    /// process's working directory, with no file pinned.
    pub fn new(args: &[String], env: Vec<(String, String)>, env_selection: EnvSelection, stdin: &[u8]) -> Input {
        let stdin = if stdin.is_empty() { StdinContent::Empty } else { StdinContent::Bytes { len: stdin.len() as u64, hash: shared_proto::hash::stable_hash(stdin) } };
        let cwd = std::env::current_dir().map(|d| d.display().to_string()).unwrap_or_default();
        Input { args: args.to_vec(), env, env_selection, stdin, cwd, files: Vec::new(), env_pins: Vec::new() }
    }

    /// The variables the key covers.
    pub fn selected_env(&self) -> impl Iterator<Item = &(String, String)> {
        self.env.iter().filter(|(k, _)| self.env_selection.selects(k))
    }

    pub fn key(&self) -> InputKey {
        self.hash(true)
    }

    /// The key of this input without its pinned files and variables: the same for every input
    /// with the same arguments, selected variables, standard input and working directory (see
    /// [`Input::same_base`]); an input that pins nothing has it as its key.
    pub fn base_key(&self) -> InputKey {
        self.hash(false)
    }

    fn hash(&self, pins: bool) -> InputKey {
        let mut h = StableHasher::default();
        let mut field = |b: &[u8]| {
            h.write_u64(b.len() as u64);
            h.write(b);
        };
        field(b"args");
        for a in &self.args {
            field(a.as_bytes());
        }
        field(b"env");
        if self.env_selection == EnvSelection::Read {
            field(b"read");
        }
        for (k, v) in self.selected_env() {
            field(k.as_bytes());
            field(v.as_bytes());
        }
        match &self.stdin {
            StdinContent::Empty => field(b"stdin:empty"),
            StdinContent::Bytes { len, hash } => {
                field(b"stdin");
                field(&len.to_le_bytes());
                field(&hash.to_le_bytes());
            }
        }
        field(b"cwd");
        field(self.cwd.as_bytes());
        if pins && !self.files.is_empty() {
            field(b"files");
            for f in &self.files {
                field(f.path.as_bytes());
                match &f.content {
                    FileContent::Absent => field(b"absent"),
                    FileContent::Bytes { len, hash } => {
                        field(&len.to_le_bytes());
                        field(&hash.to_le_bytes());
                    }
                }
            }
        }
        if pins && !self.env_pins.is_empty() {
            field(b"env-pins");
            for (k, v) in &self.env_pins {
                field(k.as_bytes());
                match v {
                    None => field(b"unset"),
                    Some(v) => {
                        field(b"set");
                        field(v.as_bytes());
                    }
                }
            }
        }
        InputKey(h.finish())
    }

    /// Does a verification of `self` cover `other`? Same arguments, same selected variables,
    /// same standard input (its bytes are compared by the caller, see `store`), same working
    /// directory and pinned files.
    pub fn same_as(&self, other: &Input) -> bool {
        self.same_base(other) && self.files == other.files && self.env_pins == other.env_pins
    }

    /// The same input but for the files and variables pinned: the same arguments, selected
    /// variables, standard input and working directory.
    pub fn same_base(&self, other: &Input) -> bool {
        let read = |i: &Input| i.env_selection == EnvSelection::Read;
        self.args == other.args && self.stdin == other.stdin && self.cwd == other.cwd && read(self) == read(other) && self.selected_env().eq(other.selected_env())
    }

    /// One line for people: the arguments, the standard input, how many variables.
    pub fn describe(&self) -> String {
        let args = if self.args.is_empty() { "no arguments".to_string() } else { format!("args {:?}", self.args) };
        let stdin = match &self.stdin {
            StdinContent::Empty => "stdin empty".to_string(),
            StdinContent::Bytes { len, .. } => format!("stdin {len} bytes"),
        };
        let env = match &self.env_selection {
            EnvSelection::All => format!("{} environment variables", self.selected_env().count()),
            EnvSelection::Read if self.env_pins.is_empty() => "the environment variables it reads".to_string(),
            EnvSelection::Read => format!(
                "the environment variables it reads, pinned: {}",
                self.env_pins.iter().map(|(k, v)| v.as_ref().map_or(format!("{k} unset"), |v| format!("{k}={v}"))).collect::<Vec<_>>().join(" ")
            ),
            EnvSelection::Only(names) => format!("environment {}", names.iter().map(|n| format!("{n}={}", self.env.iter().find(|(k, _)| k == n).map_or("(unset)", |(_, v)| v.as_str()))).collect::<Vec<_>>().join(" ")),
        };
        let files = match self.files.len() {
            0 => String::new(),
            n => format!(", {n} file(s) pinned ({})", self.files.iter().map(|f| f.path.as_str()).collect::<Vec<_>>().join(", ")),
        };
        format!("{args}, {stdin}, {env}{files}")
    }
}

#[derive(Debug, thiserror::Error)]
pub enum InputError {
    #[error("cannot read standard input: {0}")]
    Read(std::io::Error),
    #[error("cannot keep standard input in memory: {0}")]
    Memfd(std::io::Error),
}

/// Standard input as `irs run` found it.
pub enum StdinCapture {
    /// Read whole (possibly empty): the program is served these bytes.
    Captured(Vec<u8>),
    /// Not capturable: why, and what was read of it already (the program still gets those
    /// bytes, then the rest of the stream: nothing is lost).
    Uncapturable { why: String, head: Vec<u8> },
}

/// What this process's standard input is: the program is served the captured bytes through a
/// descriptor of the same kind, so that `fstat`, `lseek` and `isatty` answer as they would for
/// the original (a pipe is a pipe).
#[derive(Clone, Copy)]
pub enum StdinOrigin {
    /// A regular file: served from a sealed in-memory copy, which `fstat` describes as this
    /// file (`shared_proto::stdin_stat`).
    File(libc::stat),
    /// A pipe or FIFO: served through a pipe, refilled with the captured bytes.
    Pipe,
    /// A socket: served through a socket pair, refilled with the captured bytes.
    Socket,
    /// `/dev/null` (or closed): served `/dev/null`.
    Null,
    /// Anything else captured whole (a device): served from a sealed in-memory copy.
    Other,
}

/// What this process's standard input is (see [`StdinOrigin`]).
pub fn stdin_origin() -> StdinOrigin {
    // SAFETY: fstat fills the struct for descriptor 0 or fails; nothing else is touched.
    let mut st: libc::stat = unsafe { std::mem::zeroed() };
    if unsafe { libc::fstat(0, &mut st) } != 0 {
        return StdinOrigin::Null;
    }
    match st.st_mode & libc::S_IFMT {
        libc::S_IFREG => StdinOrigin::File(st),
        libc::S_IFIFO => StdinOrigin::Pipe,
        libc::S_IFSOCK => StdinOrigin::Socket,
        libc::S_IFCHR if st.st_rdev == libc::makedev(1, 3) => StdinOrigin::Null,
        _ => StdinOrigin::Other,
    }
}

/// Read this process's standard input ahead, at most `limit` bytes.
pub fn capture_stdin(limit: u64) -> Result<StdinCapture, InputError> {
    // SAFETY: fstat fills the struct for descriptor 0 or fails; nothing else is touched.
    let mut st: libc::stat = unsafe { std::mem::zeroed() };
    if unsafe { libc::fstat(0, &mut st) } != 0 {
        // Closed: like /dev/null.
        return Ok(StdinCapture::Captured(Vec::new()));
    }
    let kind = st.st_mode & libc::S_IFMT;
    if kind == libc::S_IFCHR {
        if st.st_rdev == libc::makedev(1, 3) {
            return Ok(StdinCapture::Captured(Vec::new()));
        }
        // SAFETY: isatty only inspects the descriptor.
        if unsafe { libc::isatty(0) } == 1 {
            return Ok(StdinCapture::Uncapturable { why: "standard input is a terminal (it cannot be read ahead)".into(), head: Vec::new() });
        }
    }
    // SAFETY: a duplicate of descriptor 0, owned by the File (closing it leaves 0 open).
    let dup = unsafe { libc::dup(0) };
    if dup < 0 {
        return Err(InputError::Read(std::io::Error::last_os_error()));
    }
    // SAFETY: `dup` is a fresh descriptor we own.
    let f = std::fs::File::from(unsafe { OwnedFd::from_raw_fd(dup) });
    let mut head = Vec::new();
    f.take(limit + 1).read_to_end(&mut head).map_err(InputError::Read)?;
    if head.len() as u64 > limit {
        return Ok(StdinCapture::Uncapturable { why: format!("standard input is longer than the capture limit ({limit} bytes; --capture-limit)"), head });
    }
    Ok(StdinCapture::Captured(head))
}

/// A sealed in-memory file holding `bytes`, positioned at its start: what the program reads as
/// its standard input.
pub fn sealed_memfd(bytes: &[u8]) -> Result<std::fs::File, InputError> {
    use std::io::{Seek, Write};
    // SAFETY: creating a new anonymous file; ownership goes to the File.
    let fd = unsafe { libc::memfd_create(c"irs-stdin".as_ptr(), libc::MFD_CLOEXEC | libc::MFD_ALLOW_SEALING) };
    if fd < 0 {
        return Err(InputError::Memfd(std::io::Error::last_os_error()));
    }
    // SAFETY: `fd` is a fresh descriptor we own.
    let mut f = std::fs::File::from(unsafe { OwnedFd::from_raw_fd(fd) });
    f.write_all(bytes).map_err(InputError::Memfd)?;
    f.seek(std::io::SeekFrom::Start(0)).map_err(InputError::Memfd)?;
    // SAFETY: fcntl on our own descriptor: no more writes, no growing or shrinking.
    let seals = libc::F_SEAL_WRITE | libc::F_SEAL_GROW | libc::F_SEAL_SHRINK | libc::F_SEAL_SEAL;
    if unsafe { libc::fcntl(f.as_raw_fd(), libc::F_ADD_SEALS, seals) } != 0 {
        return Err(InputError::Memfd(std::io::Error::last_os_error()));
    }
    Ok(f)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn input(args: &[&str], env: &[(&str, &str)], sel: EnvSelection, stdin: &[u8]) -> Input {
        let args: Vec<String> = args.iter().map(|s| s.to_string()).collect();
        Input::new(&args, env.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect(), sel, stdin)
    }

    #[test]
    fn the_key_covers_arguments_environment_and_stdin() {
        let base = input(&["careful"], &[("A", "1"), ("B", "2")], EnvSelection::All, b"");
        assert_eq!(base.key(), input(&["careful"], &[("A", "1"), ("B", "2")], EnvSelection::All, b"").key());
        assert_ne!(base.key(), input(&["fast"], &[("A", "1"), ("B", "2")], EnvSelection::All, b"").key());
        assert_ne!(base.key(), input(&["careful"], &[("A", "1"), ("B", "3")], EnvSelection::All, b"").key());
        assert_ne!(base.key(), input(&["careful"], &[("A", "1"), ("B", "2")], EnvSelection::All, b"x").key());
        // Argument boundaries count: ["ab"] is not ["a", "b"].
        assert_ne!(input(&["ab"], &[], EnvSelection::All, b"").key(), input(&["a", "b"], &[], EnvSelection::All, b"").key());
        // A subset ignores the others.
        let only_a = EnvSelection::Only(vec!["A".into()]);
        let x = input(&[], &[("A", "1"), ("B", "2")], only_a.clone(), b"");
        let y = input(&[], &[("A", "1"), ("B", "9")], only_a.clone(), b"");
        assert!(x.key() == y.key() && x.same_as(&y));
        assert!(!x.same_as(&input(&[], &[("A", "2")], only_a, b"")));
    }

    #[test]
    fn the_base_key_leaves_out_the_pins_only() {
        let base = input(&["careful"], &[("LANG", "C")], EnvSelection::Read, b"");
        assert_eq!(base.base_key(), base.key());
        let pinned = Input { files: vec![PinnedFile { path: "/etc/x".into(), content: FileContent::Absent }], env_pins: vec![("MODE".into(), None)], ..base.clone() };
        assert!(pinned.same_base(&base));
        assert_ne!(pinned.key(), base.key());
        assert_eq!(pinned.base_key(), base.key());
        assert_ne!(input(&["fast"], &[("LANG", "C")], EnvSelection::Read, b"").base_key(), base.base_key());
    }

    #[test]
    fn keys_print_and_parse() {
        let k = InputKey(0xabc);
        assert_eq!(k.to_string(), "0000000000000abc");
        assert_eq!("0000000000000abc".parse::<InputKey>(), Ok(k));
        assert!("xyz".parse::<InputKey>().is_err());
        assert_eq!(EnvSelection::parse("all"), Ok(EnvSelection::All));
        assert_eq!(EnvSelection::parse("MODE, LANG"), Ok(EnvSelection::Only(vec!["MODE".into(), "LANG".into()])));
        assert!(EnvSelection::parse("A=1").is_err());
    }

    #[test]
    fn a_sealed_memfd_serves_its_bytes_and_refuses_writes() {
        use std::io::Write;
        let mut f = sealed_memfd(b"careful\n").unwrap();
        let mut s = String::new();
        (&f).read_to_string(&mut s).unwrap();
        assert_eq!(s, "careful\n");
        assert!(f.write_all(b"fast").is_err());
    }
}
