//! `irs constrain` and `irs prefix show` (DESIGN §4): admissible prefixes as files, built from a
//! trace of `irs record` or `irs replay --trace-out`, and shown as people read them.

use shared_proto::prefix_segment::{self, PrefixError, PrefixView};
use shared_proto::requirement_table::RequirementTable;
use shared_proto::{SiteId, SiteInfo, ThreadId, Trace};
use std::collections::HashMap;
use std::fmt::Write;
use std::path::Path;

/// Cutoff vectors a file's log can take before it is full.
pub const LOG_CAPACITY: usize = 4096;

#[derive(Debug, thiserror::Error)]
pub enum ConstrainError {
    #[error(transparent)]
    Trace(#[from] shared_proto::TraceError),
    #[error("the trace is not of a complete run ({0}); record a run that ends normally")]
    Incomplete(String),
    #[error("--cut: {0}")]
    CutSyntax(String),
    #[error(transparent)]
    Prefix(#[from] PrefixError),
    #[error("cannot write {path}: {reason}")]
    Write { path: String, reason: String },
    #[error("cannot read {path}: {reason}")]
    Read { path: String, reason: String },
}

/// Which part of the trace the prefix keeps.
pub enum Keep {
    All,
    Constraints(usize),
    Cut(Vec<u32>),
}

pub fn parse_cut(text: &str) -> Result<Vec<u32>, ConstrainError> {
    text.split(',')
        .map(|t| t.trim().parse::<u32>().map_err(|_| ConstrainError::CutSyntax(format!("`{t}` is not an event count (write e.g. 3,5,0)"))))
        .collect()
}

/// What was written.
pub struct Summary {
    pub cut: Vec<u32>,
    pub constraints: usize,
    pub total_constraints: usize,
    pub threads: usize,
}

pub fn constrain(trace_path: &Path, out: &Path, keep: Keep) -> Result<Summary, ConstrainError> {
    let trace = Trace::read(trace_path)?;
    if !matches!(trace.outcome, shared_proto::Outcome::Exit(_)) {
        return Err(ConstrainError::Incomplete(trace.outcome.to_string()));
    }
    // A recorded run is not verified: its order is kept under the default equivalence.
    let table = RequirementTable::from_trace(&trace, Default::default());
    let cut = match keep {
        Keep::All => table.full_cut(),
        Keep::Constraints(n) => table.cut_keeping(n),
        Keep::Cut(c) => c,
    };
    let bytes = prefix_segment::build(&table, trace.program_id, &trace.sites, LOG_CAPACITY, &cut)?;
    let tmp = out.with_extension(format!("tmp{}", std::process::id()));
    let write_err = |e: std::io::Error| ConstrainError::Write { path: out.display().to_string(), reason: e.to_string() };
    std::fs::write(&tmp, &bytes).map_err(write_err)?;
    std::fs::rename(&tmp, out).map_err(|e| {
        let _ = std::fs::remove_file(&tmp);
        write_err(e)
    })?;
    Ok(Summary {
        constraints: table.constraints_within(&cut),
        total_constraints: table.constraints_within(&table.full_cut()),
        threads: table.threads.len(),
        cut,
    })
}

fn cut_text(c: &[u32]) -> String {
    c.iter().map(|x| x.to_string()).collect::<Vec<_>>().join(",")
}

/// `irs prefix show`: the current cutoff, the log, and every constraint inside the current
/// cutoff as an edge with source locations.
pub fn show(path: &Path) -> Result<String, ConstrainError> {
    let bytes = std::fs::read(path).map_err(|e| ConstrainError::Read { path: path.display().to_string(), reason: e.to_string() })?;
    let v = PrefixView::parse(&bytes, None)?;
    let sites: HashMap<SiteId, SiteInfo> = v.sites().into_iter().collect();
    let describe = |t: ThreadId, k: u32| -> String {
        let (site, _) = v.row(t, k);
        match site.and_then(|s| sites.get(&s)) {
            Some(info) => format!("{t}#{k} {} in {} at {}", info.kind.name(), info.function, info.location()),
            None => format!("{t}#{k} (thread exit)"),
        }
    };
    let current = v.cutoff(v.published() - 1);
    let full: Vec<u32> = (0..v.threads()).map(|t| v.thread_rows(ThreadId(t as u32))).collect();
    let mut out = String::new();
    let _ = writeln!(out, "# prefix of program {}: {} threads, {} events", v.program_id(), v.threads(), full.iter().sum::<u32>());
    let _ = writeln!(
        out,
        "# cutoff {} (of {}): {} constraints in force (the whole trace has {})",
        cut_text(&current),
        cut_text(&full),
        v.constraints_within(&current),
        v.constraints_within(&full)
    );
    if v.published() > 1 {
        let _ = writeln!(out, "# cutoff log: {}", (0..v.published()).map(|i| format!("[{}]", cut_text(&v.cutoff(i)))).collect::<Vec<_>>().join(" "));
    }
    let _ = match v.object_index() {
        Some(index) => writeln!(out, "# object index: {} entries (a thread past its cut waits only for the prefix events its access, mutex operation or exit depends on)", shared_proto::prefix_objects::Entries::len(&index)),
        None => writeln!(out, "# object index: imprecise (a thread past its cut waits for the whole prefix)"),
    };
    for t in 0..v.threads() {
        let t = ThreadId(t as u32);
        for k in 0..current[t.index()] {
            for q in v.row(t, k).1 {
                let _ = writeln!(out, "{}  <-  {}", describe(t, k), describe(q.thread, q.count - 1));
            }
        }
    }
    Ok(out)
}

/// `irs prefix relax`: append a smaller cutoff vector to a prefix file. Running programs that
/// map the file adopt it at once. The vector is written before the count that publishes it.
pub fn relax(path: &Path, cut: &[u32]) -> Result<usize, ConstrainError> {
    use std::io::{Seek, SeekFrom, Write as _};
    let read_err = |e: std::io::Error| ConstrainError::Read { path: path.display().to_string(), reason: e.to_string() };
    let write_err = |e: std::io::Error| ConstrainError::Write { path: path.display().to_string(), reason: e.to_string() };
    let mut bytes = std::fs::read(path).map_err(read_err)?;
    let index = prefix_segment::append_cutoff(&mut bytes, cut)?;
    let slot = PrefixView::parse(&bytes, None)?.cutoff_slot(index);
    // In place, the slot (vector and checksum) first, then the count: a program mapping the
    // file never sees a count that covers a slot not yet written.
    let mut f = std::fs::OpenOptions::new().write(true).open(path).map_err(write_err)?;
    f.seek(SeekFrom::Start(slot.start as u64)).map_err(write_err)?;
    f.write_all(&bytes[slot]).map_err(write_err)?;
    f.sync_data().map_err(write_err)?;
    f.seek(SeekFrom::Start(prefix_segment::PUBLISHED_OFFSET as u64)).map_err(write_err)?;
    f.write_all(&bytes[prefix_segment::PUBLISHED_OFFSET..prefix_segment::PUBLISHED_OFFSET + 4]).map_err(write_err)?;
    Ok(index)
}

/// `irs prefix install`: put a prefix where the program's runtime finds it by its program id,
/// `/dev/shm/irs-<program-id>` (mode 0600; replaced atomically).
pub fn install(path: &Path) -> Result<std::path::PathBuf, ConstrainError> {
    let bytes = std::fs::read(path).map_err(|e| ConstrainError::Read { path: path.display().to_string(), reason: e.to_string() })?;
    install_bytes(&bytes)
}

/// Install a prefix given as bytes (validated first) as the program's segment.
pub fn install_bytes(bytes: &[u8]) -> Result<std::path::PathBuf, ConstrainError> {
    let program = PrefixView::parse(bytes, None)?.program_id();
    let target = prefix_segment::segment_path(program);
    install_bytes_at(bytes, &target)?;
    Ok(target)
}

/// Install a prefix given as bytes (validated first) at `target` (mode 0600; replaced
/// atomically).
pub fn install_bytes_at(bytes: &[u8], target: &Path) -> Result<(), ConstrainError> {
    use std::os::unix::fs::OpenOptionsExt;
    PrefixView::parse(bytes, None)?;
    let tmp = target.with_extension(format!("tmp{}", std::process::id()));
    let write_err = |e: std::io::Error| ConstrainError::Write { path: target.display().to_string(), reason: e.to_string() };
    let mut f = std::fs::OpenOptions::new().write(true).create_new(true).mode(0o600).open(&tmp).map_err(write_err)?;
    std::io::Write::write_all(&mut f, bytes).map_err(write_err)?;
    drop(f);
    std::fs::rename(&tmp, target).map_err(|e| {
        let _ = std::fs::remove_file(&tmp);
        write_err(e)
    })?;
    Ok(())
}
