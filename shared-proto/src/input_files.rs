//! The files an input's verification read (DESIGN §4 "Inputs"): a directory of captures, one entry
//! per file path the program opened for reading, shared by the three sides that use it:
//! - the verifier's runs (EXPLORE) read every such file from its capture, taken at the first
//!   open, so that every execution explores the same bytes, and add an entry for each path they
//!   open first;
//! - a production run under the input's verification (ENFORCE) compares what it opens with the
//!   capture before the program reads a byte, and reads the capture it was compared with;
//! - `irs run` checks the captures against the disk before each run, to find the input's
//!   verification (a changed file is another input).
//!
//! An entry is `<h>.path` (the path, as text) and either `<h>.data` (the bytes) or `<h>.none`
//! (no file by that name: opening it failed), `h` a hash of the path. Entries are written to a
//! temporary name and renamed, so a reader sees a whole capture or none; once written, an entry
//! never changes. The directory's `index` lists the entries, a line `<h>` each, appended once
//! the entry is whole: `irs run` reads one small file before every run instead of the
//! directory. A directory is made with its index (under a temporary name, then renamed into
//! place), so an index lists every entry of its directory; a directory without one (made
//! before indexes, or where the file system cannot rename without replacing) is read whole. Paths are absolute and lexically normalised (`.` and `..` removed, symbolic
//! links not followed): a relative name is taken from the working directory it was opened in.

use std::io::Write;
use std::path::{Component, Path, PathBuf};

/// The directory of the captures, as the runtime finds it (set by the executor and `irs run`).
pub const ENV_DIR: &str = "IRS_INPUT_FILES";
/// The file of a captures' directory that lists its entries.
const INDEX: &str = "index";
/// The largest file captured, in bytes (default [`DEFAULT_LIMIT`]).
pub const ENV_LIMIT: &str = "IRS_CAPTURE_LIMIT";
/// The default capture limit, for files and standard input alike.
pub const DEFAULT_LIMIT: u64 = 16 << 20;

/// What the verification found under a path.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Captured {
    /// These bytes, kept in this file of the directory.
    Bytes(PathBuf),
    /// No file: opening it failed with "no such file".
    Absent,
}

/// The captures of one input's verification.
#[derive(Clone, Debug)]
pub struct FileCaptures {
    dir: PathBuf,
}

/// `path` made absolute against `base` (a directory) and normalised lexically.
pub fn normalise(base: &Path, path: &Path) -> PathBuf {
    let mut out = PathBuf::from("/");
    let joined = if path.is_absolute() { path.to_path_buf() } else { base.join(path) };
    for c in joined.components() {
        match c {
            Component::RootDir | Component::CurDir | Component::Prefix(_) => {}
            Component::ParentDir => {
                out.pop();
            }
            Component::Normal(n) => out.push(n),
        }
    }
    out
}

fn entry_name(path: &Path) -> String {
    String::from_utf8(entry_name_bytes(path).to_vec()).expect("hex digits")
}

/// The name of `path`'s files in the directory (before their suffix), made without allocating
/// (the runtime looks captures up inside an execution, whose heap is the program's).
pub fn entry_name_bytes(path: &Path) -> [u8; 16] {
    use std::os::unix::ffi::OsStrExt;
    let h = crate::hash::stable_hash(path.as_os_str().as_bytes());
    let mut out = [0u8; 16];
    for (i, o) in out.iter_mut().enumerate() {
        *o = b"0123456789abcdef"[((h >> (60 - 4 * i)) & 0xf) as usize];
    }
    out
}

impl FileCaptures {
    pub fn new(dir: impl Into<PathBuf>) -> FileCaptures {
        FileCaptures { dir: dir.into() }
    }

    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The capture of `path` (normalised), if the verification has one.
    pub fn lookup(&self, path: &Path) -> Option<Captured> {
        let name = entry_name(path);
        let data = self.dir.join(format!("{name}.data"));
        if data.exists() {
            return Some(Captured::Bytes(data));
        }
        self.dir.join(format!("{name}.none")).exists().then_some(Captured::Absent)
    }

    /// Make the directory, with its empty index, unless it exists. It appears whole: made
    /// under a temporary name beside it and renamed into place, never over another's.
    pub fn ensure_dir(&self) -> std::io::Result<()> {
        if self.dir.is_dir() {
            return Ok(());
        }
        let (Some(parent), Some(name)) = (self.dir.parent(), self.dir.file_name()) else {
            return std::fs::create_dir_all(&self.dir);
        };
        std::fs::create_dir_all(parent)?;
        // Unique to this process and call (threads of a process may make it at once).
        static CALLS: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
        // Relaxed: a counter for names, ordering nothing.
        let call = CALLS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        // SAFETY: getpid has no preconditions.
        let tmp = parent.join(format!(".{}.{}.{call}", name.to_string_lossy(), unsafe { libc::getpid() }));
        let _ = std::fs::remove_dir_all(&tmp);
        std::fs::create_dir(&tmp)?;
        std::fs::File::create(tmp.join(INDEX))?;
        let renamed = rename_no_replace(&tmp, &self.dir);
        if renamed.is_err() {
            let _ = std::fs::remove_dir_all(&tmp);
        }
        match renamed {
            Ok(()) => Ok(()),
            // Another process made it meanwhile.
            Err(e) if matches!(e.raw_os_error(), Some(libc::EEXIST) | Some(libc::ENOTEMPTY)) => Ok(()),
            // A file system that cannot rename without replacing: a directory without index.
            Err(e) if e.raw_os_error() == Some(libc::EINVAL) => std::fs::create_dir_all(&self.dir),
            Err(e) => Err(e),
        }
    }

    /// Keep `bytes` as the capture of `path` (or, with `None`, that there is no such file). An
    /// entry already there stays (the first capture is the one every run has read).
    pub fn record(&self, path: &Path, bytes: Option<&[u8]>) -> std::io::Result<()> {
        use std::os::unix::ffi::OsStrExt;
        if self.lookup(path).is_some() {
            return Ok(());
        }
        self.ensure_dir()?;
        let name = entry_name(path);
        // SAFETY: getpid has no preconditions.
        let tmp = |what: &str| self.dir.join(format!(".{name}.{what}.{}", unsafe { libc::getpid() }));
        let write = |what: &str, content: &[u8]| -> std::io::Result<()> {
            let t = tmp(what);
            let mut f = std::fs::File::create(&t)?;
            f.write_all(content)?;
            f.sync_data().ok();
            std::fs::rename(&t, self.dir.join(format!("{name}.{what}")))
        };
        write("path", path.as_os_str().as_bytes())?;
        match bytes {
            Some(b) => write("data", b)?,
            None => write("none", b"")?,
        }
        // One write to a file opened for appending: lines of concurrent writers do not mix.
        match std::fs::OpenOptions::new().append(true).open(self.dir.join(INDEX)) {
            Ok(mut index) => index.write_all(format!("{name}\n").as_bytes()),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
            Err(e) => Err(e),
        }
    }

    /// Every capture, by path (sorted).
    pub fn list(&self) -> Vec<(PathBuf, Captured)> {
        use std::os::unix::ffi::OsStrExt;
        let mut names: Vec<String> = match std::fs::read_to_string(self.dir.join(INDEX)) {
            Ok(index) => index.lines().map(str::to_string).collect(),
            Err(_) => std::fs::read_dir(&self.dir)
                .into_iter()
                .flatten()
                .flatten()
                .filter_map(|e| Some(e.file_name().to_str()?.strip_suffix(".path")?.to_string()))
                .collect(),
        };
        names.sort();
        names.dedup();
        let mut out: Vec<(PathBuf, Captured)> = names
            .into_iter()
            .filter_map(|name| {
                let path = PathBuf::from(std::ffi::OsStr::from_bytes(&std::fs::read(self.dir.join(format!("{name}.path"))).ok()?));
                (entry_name(&path) == name).then_some(())?;
                Some((path.clone(), self.lookup(&path)?))
            })
            .collect();
        out.sort_by(|a, b| a.0.cmp(&b.0));
        out
    }

    /// Every capture, as `PATH (N bytes)` or `PATH (absent)`, for people.
    pub fn summary(&self) -> Vec<String> {
        self.list()
            .into_iter()
            .map(|(p, c)| match c {
                Captured::Bytes(d) => format!("{} ({} bytes)", p.display(), std::fs::metadata(d).map_or(0, |m| m.len())),
                Captured::Absent => format!("{} (absent)", p.display()),
            })
            .collect()
    }

    /// Does the disk hold what every capture says, now? The first path that differs, and how.
    pub fn first_difference(&self, limit: u64) -> Option<(PathBuf, String)> {
        self.list().into_iter().find_map(|(path, captured)| differs(&path, &captured, limit).map(|why| (path, why)))
    }
}

/// Rename `from` to `to` unless `to` exists.
fn rename_no_replace(from: &Path, to: &Path) -> std::io::Result<()> {
    use std::os::unix::ffi::OsStrExt;
    let c = |p: &Path| std::ffi::CString::new(p.as_os_str().as_bytes()).map_err(|_| std::io::Error::from_raw_os_error(libc::EINVAL));
    let (from, to) = (c(from)?, c(to)?);
    // SAFETY: two NUL-terminated paths, read by the call only.
    if unsafe { libc::renameat2(libc::AT_FDCWD, from.as_ptr(), libc::AT_FDCWD, to.as_ptr(), libc::RENAME_NOREPLACE) } == 0 {
        Ok(())
    } else {
        Err(std::io::Error::last_os_error())
    }
}

/// What the file at `path` holds now: its bytes (`Ok(None)`: there is none), or why it cannot
/// be read as an input (not a regular file, longer than `limit`, unreadable).
pub fn read_input_file(path: &Path, limit: u64) -> Result<Option<Vec<u8>>, String> {
    use std::io::Read;
    let f = match std::fs::File::open(path) {
        Ok(f) => f,
        Err(e) if matches!(e.raw_os_error(), Some(libc::ENOENT) | Some(libc::ENOTDIR)) => return Ok(None),
        Err(e) => return Err(format!("cannot be read ({e})")),
    };
    let meta = f.metadata().map_err(|e| format!("cannot be read ({e})"))?;
    if !meta.is_file() {
        return Err("is not a regular file (its bytes cannot be captured)".into());
    }
    let mut bytes = Vec::new();
    f.take(limit + 1).read_to_end(&mut bytes).map_err(|e| format!("cannot be read ({e})"))?;
    if bytes.len() as u64 > limit {
        return Err(format!("is longer than the capture limit ({limit} bytes)"));
    }
    Ok(Some(bytes))
}

/// How the file at `path` differs from its capture now, if it does. The two are compared in
/// chunks, with no allocation (a program thread under ENFORCE calls this at each open: reading
/// both whole into fresh memory cost ten times the reads themselves, in page faults).
pub fn differs(path: &Path, captured: &Captured, limit: u64) -> Option<String> {
    use std::io::Read;
    let open = |p: &Path| match std::fs::File::open(p) {
        Ok(f) => Ok(Some(f)),
        Err(e) if matches!(e.raw_os_error(), Some(libc::ENOENT) | Some(libc::ENOTDIR)) => Ok(None),
        Err(e) => Err(format!("cannot be read ({e})")),
    };
    let now = match open(path) {
        Ok(f) => f,
        Err(why) => return Some(why),
    };
    let (data, mut now) = match (captured, now) {
        (Captured::Absent, None) => return None,
        (Captured::Absent, Some(_)) => return Some("exists now; the verified input had no such file".into()),
        (Captured::Bytes(_), None) => return Some("is gone; the verified input had it".into()),
        (Captured::Bytes(data), Some(now)) => (data, now),
    };
    let meta = match now.metadata() {
        Ok(m) => m,
        Err(e) => return Some(format!("cannot be read ({e})")),
    };
    if !meta.is_file() {
        return Some("is not a regular file (its bytes cannot be captured)".into());
    }
    if meta.len() > limit {
        return Some(format!("is longer than the capture limit ({limit} bytes)"));
    }
    let mut verified = match std::fs::File::open(data) {
        Ok(f) => f,
        Err(e) => return Some(format!("its verified copy cannot be read ({e})")),
    };
    let verified_len = verified.metadata().map_or(u64::MAX, |m| m.len());
    let other = || Some(format!("holds other bytes than the verified input's ({} bytes now, {verified_len} verified)", meta.len()));
    if verified_len != meta.len() {
        return other();
    }
    let (mut a, mut b) = ([0u8; 16 << 10], [0u8; 16 << 10]);
    loop {
        let n = match now.read(&mut a) {
            Ok(n) => n,
            Err(e) => return Some(format!("cannot be read ({e})")),
        };
        if n == 0 {
            // The verified copy has the same length: both ended.
            return None;
        }
        if verified.read_exact(&mut b[..n]).is_err() || a[..n] != b[..n] {
            return other();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scratch(name: &str) -> PathBuf {
        let d = std::env::temp_dir().join(format!("irs-input-files-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(&d).unwrap();
        d
    }

    #[test]
    fn a_directory_made_here_lists_its_entries_in_its_index_and_one_without_is_read_whole() {
        let d = scratch("index");
        let caps = FileCaptures::new(d.join("files"));
        caps.record(&d.join("a"), Some(b"1")).unwrap();
        caps.record(&d.join("b"), None).unwrap();
        caps.record(&d.join("a"), Some(b"2")).unwrap();
        assert_eq!(std::fs::read_to_string(d.join("files").join(INDEX)).unwrap().lines().count(), 2, "an entry once");
        assert_eq!(caps.list().iter().map(|(p, _)| p.clone()).collect::<Vec<_>>(), vec![d.join("a"), d.join("b")]);
        // What the index lists is what the directory holds: an entry's files without a line
        // are not listed (a writer between its rename and its line).
        std::fs::write(d.join("files").join(format!("{}.path", entry_name(&d.join("c")))), d.join("c").as_os_str().as_encoded_bytes()).unwrap();
        std::fs::write(d.join("files").join(format!("{}.none", entry_name(&d.join("c")))), b"").unwrap();
        assert_eq!(caps.list().len(), 2);
        // A directory made before indexes has none, is read whole, and gets none.
        let old = FileCaptures::new(d.join("old"));
        std::fs::create_dir_all(old.dir()).unwrap();
        old.record(&d.join("a"), Some(b"1")).unwrap();
        old.record(&d.join("b"), None).unwrap();
        assert!(!old.dir().join(INDEX).exists());
        assert_eq!(old.list().len(), 2);
        // Made by several writers at once: one directory, with its index listing every entry.
        let paths: Vec<PathBuf> = (0..8).map(|i| d.join(format!("f{i}"))).collect();
        std::thread::scope(|s| {
            for p in &paths {
                let dir = d.join("race");
                s.spawn(move || FileCaptures::new(dir).record(p, Some(b"x")).unwrap());
            }
        });
        let race = FileCaptures::new(d.join("race"));
        assert_eq!(race.list().len(), 8);
        assert_eq!(std::fs::read_to_string(race.dir().join(INDEX)).unwrap().lines().count(), 8);
        assert!(std::fs::read_dir(&d).unwrap().flatten().all(|e| !e.file_name().to_string_lossy().starts_with('.')), "no temporary directory left");
        let _ = std::fs::remove_dir_all(&d);
    }

    #[test]
    fn entry_names_are_the_hash_in_hex() {
        let p = Path::new("/etc/app.conf");
        let bytes = entry_name_bytes(p);
        use std::os::unix::ffi::OsStrExt;
        assert_eq!(std::str::from_utf8(&bytes).unwrap(), format!("{:016x}", crate::hash::stable_hash(p.as_os_str().as_bytes())));
    }

    #[test]
    fn paths_are_made_absolute_and_normal() {
        assert_eq!(normalise(Path::new("/home/u"), Path::new("cfg")), PathBuf::from("/home/u/cfg"));
        assert_eq!(normalise(Path::new("/home/u"), Path::new("./a/../b//c")), PathBuf::from("/home/u/b/c"));
        assert_eq!(normalise(Path::new("/x"), Path::new("/etc/./app.conf")), PathBuf::from("/etc/app.conf"));
        assert_eq!(normalise(Path::new("/"), Path::new("../../x")), PathBuf::from("/x"));
    }

    #[test]
    fn captures_are_kept_listed_and_compared_with_the_disk() {
        let d = scratch("caps");
        let caps = FileCaptures::new(d.join("files"));
        let cfg = d.join("cfg");
        std::fs::write(&cfg, b"careful\n").unwrap();
        let gone = d.join("gone");
        assert_eq!(caps.lookup(&cfg), None);
        caps.record(&cfg, Some(b"careful\n")).unwrap();
        caps.record(&gone, None).unwrap();
        // The first capture stays.
        caps.record(&cfg, Some(b"fast\n")).unwrap();
        let Some(Captured::Bytes(data)) = caps.lookup(&cfg) else { panic!("no capture") };
        assert_eq!(std::fs::read(data).unwrap(), b"careful\n");
        assert_eq!(caps.lookup(&gone), Some(Captured::Absent));
        assert_eq!(caps.list().len(), 2);
        assert_eq!(caps.first_difference(1 << 20), None);
        std::fs::write(&cfg, b"fast\n").unwrap();
        let (p, why) = caps.first_difference(1 << 20).unwrap();
        assert_eq!(p, cfg);
        assert!(why.contains("other bytes"), "{why}");
        std::fs::write(&cfg, b"careful\n").unwrap();
        std::fs::write(&gone, b"").unwrap();
        assert!(caps.first_difference(1 << 20).unwrap().1.contains("exists now"));
        std::fs::remove_file(&gone).unwrap();
        std::fs::remove_file(&cfg).unwrap();
        assert!(caps.first_difference(1 << 20).unwrap().1.contains("is gone"));
        assert!(read_input_file(&d, 10).unwrap_err().contains("not a regular file"));
        std::fs::write(&cfg, vec![b'x'; 11]).unwrap();
        assert!(read_input_file(&cfg, 10).unwrap_err().contains("capture limit"));
        let _ = std::fs::remove_dir_all(&d);
    }
}
