//! Files and environment variables as part of an input (DESIGN §4 "Inputs"): which
//! verification covers a run, given what the files it will read hold now and what its
//! environment holds.
//!
//! The files a program opens are known only once it runs: the verification of an input finds
//! them (its runs capture each file at its first open, `shared_proto::input_files`), and every
//! production run under that verification compares each file it opens with the capture. Before
//! a run, `irs run` looks for the verification whose captures the disk still holds, among the
//! inputs with the same arguments, environment, working directory and standard input. When
//! none does (a file changed), the run is on a new input: the same, with those files *pinned*
//! as they are now, whose verification starts from captures of exactly those bytes.
//!
//! The environment variables a program reads (`shared_proto::input_env`, with the default
//! `EnvSelection::Read`) are found the same way: a verification keeps each variable its runs
//! read, the run is on the input whose variables hold the same values in its environment now,
//! and a new input pins the variables the earlier verifications read. A variable no
//! verification read (bash's `_`, one more in a service's environment) makes no other input.

use super::input::{EnvSelection, FileContent, Input, PinnedFile};
use super::store::{InputStore, ProgramStore};
use shared_proto::input_env::EnvCaptures;
use shared_proto::input_files::read_input_file;
use std::collections::BTreeSet;
use std::path::PathBuf;

/// The input a run is on, given the disk as it is.
pub enum Found {
    /// A stored input whose verification's captures the disk holds.
    Stored(Input),
    /// A new input: `input`, whose pinned files hold `pins` (path, bytes or absent); its
    /// pinned variables are `input.env_pins`, and `whole` says that an earlier verification
    /// found the program reads its environment whole.
    New { input: Input, pins: Vec<(PathBuf, Option<Vec<u8>>)>, whole: bool },
}

/// The variables `store`'s verification read, as it read them.
pub fn env_captures(store: &InputStore) -> EnvCaptures {
    EnvCaptures::in_files_dir(&store.files_dir())
}

/// Does `env` (the environment a run would have) hold what the verification of `stored`
/// read? The first difference, if any. Only inputs keyed on what the program reads have
/// captured variables.
pub fn env_difference(store: &InputStore, stored: &Input, env: &[(String, String)]) -> Option<String> {
    if stored.env_selection != EnvSelection::Read {
        return None;
    }
    env_captures(store).first_difference(env, &stored.env)
}

/// The input of a run with `base`'s arguments, environment, working directory and standard
/// input, given the files on disk now. `Err`: a file an earlier verification read cannot be
/// captured now (why).
pub fn find(program: &ProgramStore, base: Input, limit: u64) -> Result<Found, String> {
    // The inputs with this base, from the program's index (one small file) where it has one.
    let stores = program.inputs_of_base(base.base_key()).unwrap_or_else(|| program.inputs());
    let candidates: Vec<(InputStore, Input)> = stores.into_iter().filter_map(|s| s.load().ok().map(|i| (s, i))).filter(|(_, i)| i.same_base(&base)).collect();
    // The newest first: the one made for the files as they were last seen.
    if let Some((_, i)) = candidates.iter().rev().find(|(s, i)| env_difference(s, i, &base.env).is_none() && s.captures().first_difference(limit).is_none()) {
        return Ok(Found::Stored(i.clone()));
    }
    let read = base.env_selection == EnvSelection::Read;
    let whole = read && candidates.iter().any(|(s, _)| env_captures(s).whole());
    let names: BTreeSet<String> = if !read {
        BTreeSet::new()
    } else if whole {
        base.env.iter().map(|(k, _)| k.clone()).collect()
    } else {
        candidates.iter().flat_map(|(s, _)| env_captures(s).list().into_iter().map(|(n, _)| String::from_utf8_lossy(&n).into_owned())).collect()
    };
    let env_pins: Vec<(String, Option<String>)> = names.into_iter().map(|n| {
        let v = base.env.iter().find(|(k, _)| *k == n).map(|(_, v)| v.clone());
        (n, v)
    }).collect();
    let paths: BTreeSet<PathBuf> = candidates.iter().flat_map(|(s, _)| s.captures().list().into_iter().map(|(p, _)| p)).collect();
    let mut pins = Vec::new();
    let mut files = Vec::new();
    for p in paths {
        let bytes = read_input_file(&p, limit).map_err(|why| format!("the input file {} {why}", p.display()))?;
        files.push(PinnedFile { path: p.display().to_string(), content: FileContent::of(bytes.as_deref()) });
        pins.push((p, bytes));
    }
    Ok(Found::New { input: Input { files, env_pins, ..base }, pins, whole })
}

/// Keep the pinned files and variables as the input's first captures, so that its
/// verification reads these bytes, and runs are matched on these variables from the start.
pub fn pin(store: &InputStore, input: &Input, pins: &[(PathBuf, Option<Vec<u8>>)], whole: bool) -> std::io::Result<()> {
    let captures = store.captures();
    for (p, bytes) in pins {
        captures.record(p, bytes.as_deref())?;
    }
    let env = env_captures(store);
    for (k, v) in &input.env_pins {
        env.record(k.as_bytes(), v.as_ref().map(|v| v.as_bytes()))?;
    }
    if whole {
        env.record_whole()?;
    }
    Ok(())
}

/// The first file of the input's verification that differs on disk now, and how, if any.
pub fn changed(store: &InputStore, limit: u64) -> Option<String> {
    store.captures().first_difference(limit).map(|(p, why)| format!("the input file {} {why}", p.display()))
}
