//! Files as part of an input (DESIGN §4 "Inputs"; issue 19): which verification covers a run,
//! given what the files it will read hold now.
//!
//! The files a program opens are known only once it runs: the verification of an input finds
//! them (its runs capture each file at its first open, `shared_proto::input_files`), and every
//! production run under that verification compares each file it opens with the capture. Before
//! a run, `irs run` looks for the verification whose captures the disk still holds, among the
//! inputs with the same arguments, environment, working directory and standard input. When
//! none does (a file changed), the run is on a new input: the same, with those files *pinned*
//! as they are now, whose verification starts from captures of exactly those bytes.

use super::input::{FileContent, Input, PinnedFile};
use super::store::{InputStore, ProgramStore};
use shared_proto::input_files::read_input_file;
use std::collections::BTreeSet;
use std::path::PathBuf;

/// The input a run is on, given the disk as it is.
pub enum Found {
    /// A stored input whose verification's captures the disk holds.
    Stored(Input),
    /// A new input: `input`, whose pinned files hold `pins` (path, bytes or absent).
    New { input: Input, pins: Vec<(PathBuf, Option<Vec<u8>>)> },
}

/// The input of a run with `base`'s arguments, environment, working directory and standard
/// input, given the files on disk now. `Err`: a file an earlier verification read cannot be
/// captured now (why).
pub fn find(program: &ProgramStore, base: Input, limit: u64) -> Result<Found, String> {
    let candidates: Vec<(InputStore, Input)> = program.inputs().into_iter().filter_map(|s| s.load().ok().map(|i| (s, i))).filter(|(_, i)| i.same_base(&base)).collect();
    // The newest first: the one made for the files as they were last seen.
    if let Some((_, i)) = candidates.iter().rev().find(|(s, _)| s.captures().first_difference(limit).is_none()) {
        return Ok(Found::Stored(i.clone()));
    }
    let paths: BTreeSet<PathBuf> = candidates.iter().flat_map(|(s, _)| s.captures().list().into_iter().map(|(p, _)| p)).collect();
    let mut pins = Vec::new();
    let mut files = Vec::new();
    for p in paths {
        let bytes = read_input_file(&p, limit).map_err(|why| format!("the input file {} {why}", p.display()))?;
        files.push(PinnedFile { path: p.display().to_string(), content: FileContent::of(bytes.as_deref()) });
        pins.push((p, bytes));
    }
    Ok(Found::New { input: Input { files, ..base }, pins })
}

/// Keep the pinned files as the input's first captures, so that its verification reads these
/// bytes.
pub fn pin(store: &InputStore, pins: &[(PathBuf, Option<Vec<u8>>)]) -> std::io::Result<()> {
    let captures = store.captures();
    for (p, bytes) in pins {
        captures.record(p, bytes.as_deref())?;
    }
    Ok(())
}

/// The first file of the input's verification that differs on disk now, and how, if any.
pub fn changed(store: &InputStore, limit: u64) -> Option<String> {
    store.captures().first_difference(limit).map(|(p, why)| format!("the input file {} {why}", p.display()))
}
