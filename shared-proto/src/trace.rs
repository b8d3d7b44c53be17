//! The trace file that RECORD mode writes (and, later, EXPLORE and `irs replay`): a versioned
//! header (magic, format version) followed by a bincode body holding the program id, the site
//! table, the globals' addresses, the threads and every visible event in the order they
//! happened. The order is a real linearisation of the run (RECORD serialises visible events),
//! so happens-before can be read off it exactly.

use crate::event::{Event, ObjectRef, Step};
use crate::ids::{ProgramId, SiteId, ThreadId};
use crate::outcome::Outcome;
use crate::site::SiteInfo;
use crate::image_range::ImageRange;
use crate::symbolizer::{GlobalRange, Symbolizer};
use crate::codec;
use bincode::Options;
use serde::{Deserialize, Serialize};
use std::collections::HashMap;
use std::sync::Arc;
use std::io::Write;
use std::path::Path;

pub const TRACE_MAGIC: [u8; 8] = *b"IRSTRACE";
/// 2: mutexes carry their logical address. 3: the process's end (`End`, `Kill`) and the cut
/// operation of a kill step. 4: stores' and updates' operands. 5: the executable's image.
pub const TRACE_FORMAT_VERSION: u32 = 5;

#[derive(Debug, thiserror::Error)]
pub enum TraceError {
    #[error("cannot read trace {path}: {source}")]
    Read { path: String, source: std::io::Error },
    #[error("cannot write trace {path}: {source}")]
    Write { path: String, source: std::io::Error },
    #[error("{path} is not an irs trace (bad magic)")]
    NotATrace { path: String },
    #[error("{path} is an irs trace of format version {found}; this irs reads version {expected}")]
    Version { path: String, found: u32, expected: u32 },
    #[error("{path} is a corrupt or truncated irs trace: {detail}")]
    Corrupt { path: String, detail: String },
}

/// A logical thread of the run.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ThreadInfo {
    pub id: ThreadId,
    /// The creator, `None` for `main`.
    pub parent: Option<ThreadId>,
    /// This thread is the `nth`-th (from 0) thread its creator created: with `parent` this is
    /// the timing-independent identity of DESIGN §3.
    pub nth_child: u32,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Trace {
    pub program_id: ProgramId,
    pub argv: Vec<String>,
    /// The program's site table and globals: the same for every trace of one program, so shared.
    pub sites: Arc<Vec<(SiteId, SiteInfo)>>,
    pub globals: Arc<Vec<GlobalRange>>,
    /// Where the executable's statics lay in the process that ran it.
    pub image: ImageRange,
    pub threads: Vec<ThreadInfo>,
    pub events: Vec<Event>,
    /// EXPLORE only: the scheduling decision before each event (empty for RECORD).
    pub steps: Vec<Step>,
    pub outcome: Outcome,
}

impl Trace {
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(64 + self.events.len() * 40);
        out.extend_from_slice(&TRACE_MAGIC);
        out.extend_from_slice(&TRACE_FORMAT_VERSION.to_le_bytes());
        codec::options().serialize_into(&mut out, self).expect("serialising into a Vec cannot fail");
        out
    }

    /// Validates magic, version and the whole body; never trusts a length field beyond the
    /// file's own size.
    pub fn from_bytes(bytes: &[u8], path: &str) -> Result<Trace, TraceError> {
        if bytes.len() < 12 || bytes[..8] != TRACE_MAGIC {
            return Err(TraceError::NotATrace { path: path.to_string() });
        }
        let version = u32::from_le_bytes(bytes[8..12].try_into().unwrap());
        if version != TRACE_FORMAT_VERSION {
            return Err(TraceError::Version {
                path: path.to_string(),
                found: version,
                expected: TRACE_FORMAT_VERSION,
            });
        }
        let body = &bytes[12..];
        let trace: Trace = codec::decode(body)
            .map_err(|e| TraceError::Corrupt { path: path.to_string(), detail: e.to_string() })?;
        trace.check().map_err(|detail| TraceError::Corrupt { path: path.to_string(), detail })?;
        Ok(trace)
    }

    pub fn read(path: &Path) -> Result<Trace, TraceError> {
        let p = path.display().to_string();
        let bytes = std::fs::read(path).map_err(|source| TraceError::Read { path: p.clone(), source })?;
        Trace::from_bytes(&bytes, &p)
    }

    /// Writes atomically: a temporary file in the same directory, then rename, so a reader
    /// never sees half a trace.
    pub fn write(&self, path: &Path) -> Result<(), TraceError> {
        let p = path.display().to_string();
        let err = |source| TraceError::Write { path: p.clone(), source };
        // Relaxed: only makes the temporary name unique among this process's writes.
        static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
        let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let tmp = path.with_extension(format!("tmp{}-{n}", std::process::id()));
        let mut f = std::fs::File::create(&tmp).map_err(err)?;
        f.write_all(&self.to_bytes()).map_err(err)?;
        f.sync_all().ok();
        drop(f);
        std::fs::rename(&tmp, path).map_err(|e| {
            let _ = std::fs::remove_file(&tmp);
            err(e)
        })
    }

    /// Internal consistency: thread ids dense, events' `(tid, k)` numbered per thread from 0.
    fn check(&self) -> Result<(), String> {
        for (i, t) in self.threads.iter().enumerate() {
            if t.id.index() != i {
                return Err(format!("thread table entry {i} has id {}", t.id));
            }
        }
        let mut next_k = vec![0u32; self.threads.len()];
        for (i, e) in self.events.iter().enumerate() {
            let slot = next_k
                .get_mut(e.tid.index())
                .ok_or_else(|| format!("event {i} belongs to unknown thread {}", e.tid))?;
            if e.k != *slot {
                return Err(format!("event {i} of {} has k={} where {} was expected", e.tid, e.k, slot));
            }
            *slot += 1;
        }
        Ok(())
    }

    pub fn site_table(&self) -> HashMap<SiteId, &SiteInfo> {
        self.sites.iter().map(|(id, info)| (*id, info)).collect()
    }

    pub fn symbolizer(&self) -> Symbolizer {
        Symbolizer::new(self.globals.as_ref().clone())
    }

    /// Number of events of each thread, indexed by thread id.
    pub fn per_thread_counts(&self) -> Vec<u32> {
        let mut counts = vec![0u32; self.threads.len()];
        for e in &self.events {
            counts[e.tid.index()] += 1;
        }
        counts
    }

    /// The object as people read it: a global's name (`arr+8`), `T3`, a logical heap or stack
    /// address (`heap[T1#0]+8`, `stack[T2]-24`) where known, or `-` for other memory.
    pub fn object_name(&self, symbolizer: &Symbolizer, object: &ObjectRef) -> String {
        use crate::logical_addr::Region;
        match object {
            ObjectRef::Memory { addr, logical, .. } => symbolizer.name(*addr).unwrap_or_else(|| match logical {
                Some(l) if l.region != Region::Static => l.to_string(),
                _ => "-".to_string(),
            }),
            ObjectRef::Mutex { addr, .. } => match crate::sync_object::decode(*addr) {
                // An internal object of a condition variable, semaphore, ... (see `sync_object`).
                Some((base, tag)) => format!("{}.{}", symbolizer.name(base).unwrap_or_else(|| format!("{base:#x}")), crate::sync_object::label(tag)),
                None => symbolizer.name(*addr).unwrap_or_else(|| "-".to_string()),
            },
            ObjectRef::Thread(t) => t.to_string(),
            ObjectRef::Process => "the process".to_string(),
            ObjectRef::Atomic => "atomic blocks".to_string(),
            ObjectRef::Choice { value, of } => format!("value {value} of {of}"),
            ObjectRef::Sem { addr, logical, .. } | ObjectRef::Barrier { addr, logical, .. } | ObjectRef::RwLock { addr, logical } => symbolizer.name(*addr).unwrap_or_else(|| match logical {
                Some(l) if l.region != Region::Static => l.to_string(),
                _ => "-".to_string(),
            }),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::event::EventKind;

    fn sample() -> Trace {
        Trace {
            program_id: ProgramId(7),
            argv: vec!["prog".into()],
            sites: Arc::new(vec![]),
            globals: Arc::new(vec![GlobalRange { name: "x".into(), addr: 0x1000, size: 4 }]),
            image: ImageRange { start: 0x1000, end: 0x2000 },
            threads: vec![ThreadInfo { id: ThreadId(0), parent: None, nth_child: 0 }],
            events: vec![Event {
                tid: ThreadId(0),
                k: 0,
                site: None,
                kind: EventKind::Access(crate::AccessKind::Store),
                object: ObjectRef::Memory { addr: 0x1000, size: 4, logical: None },
                value: Some(crate::operand::Valued { operand: crate::operand::Operand::Store(crate::operand::raw(7)), changed: false }),
            }],
            steps: vec![],
            outcome: Outcome::Exit(0),
        }
    }

    #[test]
    fn round_trip() {
        let t = sample();
        assert_eq!(Trace::from_bytes(&t.to_bytes(), "t").unwrap(), t);
    }

    #[test]
    fn rejects_foreign_truncated_corrupt_and_other_versions() {
        let bytes = sample().to_bytes();
        assert!(matches!(Trace::from_bytes(b"ELF....", "t"), Err(TraceError::NotATrace { .. })));
        assert!(matches!(
            Trace::from_bytes(&bytes[..bytes.len() - 3], "t"),
            Err(TraceError::Corrupt { .. })
        ));
        let mut v2 = bytes.clone();
        v2[8] = 9;
        assert!(matches!(Trace::from_bytes(&v2, "t"), Err(TraceError::Version { found: 9, .. })));
        let mut bad = sample();
        bad.events[0].k = 5;
        assert!(matches!(Trace::from_bytes(&bad.to_bytes(), "t"), Err(TraceError::Corrupt { .. })));
    }
}
