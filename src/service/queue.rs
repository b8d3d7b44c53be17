//! Inputs waiting for verification (DESIGN §4 "Inputs"): every run on an input no verification
//! covers queues it; one worker per program (`worker`) verifies queued inputs one after another,
//! oldest first. An entry is a file `<root>/<program>/queue/<time>-<key>`, so the queue survives
//! the processes that fill and empty it.

use super::input::InputKey;
use super::store::{ProgramStore, StoreError};

/// The queued inputs, oldest first.
pub fn queued(program: &ProgramStore) -> Vec<InputKey> {
    entries(program).into_iter().map(|(_, k)| k).collect()
}

fn entries(program: &ProgramStore) -> Vec<(String, InputKey)> {
    let mut out: Vec<(String, InputKey)> = std::fs::read_dir(program.queue_dir())
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|e| {
            let name = e.file_name().to_str()?.to_string();
            let key = name.rsplit_once('-')?.1.parse().ok()?;
            Some((name, key))
        })
        .collect();
    out.sort();
    out
}

/// Queue `key` unless it is queued already.
pub fn enqueue(program: &ProgramStore, key: InputKey) -> Result<(), StoreError> {
    if queued(program).contains(&key) {
        return Ok(());
    }
    let dir = program.queue_dir();
    std::fs::create_dir_all(&dir).map_err(|e| StoreError::Write { path: dir.display().to_string(), reason: e.to_string() })?;
    let nanos = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_nanos()).unwrap_or(0);
    let path = dir.join(format!("{nanos:020}-{key}"));
    std::fs::write(&path, b"").map_err(|e| StoreError::Write { path: path.display().to_string(), reason: e.to_string() })
}

/// The oldest queued input.
pub fn next(program: &ProgramStore) -> Option<InputKey> {
    entries(program).first().map(|(_, k)| *k)
}

/// Take `key` off the queue.
pub fn remove(program: &ProgramStore, key: InputKey) {
    for (name, k) in entries(program) {
        if k == key {
            let _ = std::fs::remove_file(program.queue_dir().join(name));
        }
    }
}
