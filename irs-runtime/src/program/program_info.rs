//! What the program knows about itself: the module records the pass embedded in the
//! `irs_modules` section (site tables, globals), read and validated at start-up, and the program
//! id derived from them (DESIGN §5, §6).

use shared_proto::hash::StableHasher;
use shared_proto::image_range::ImageRange;
use shared_proto::module_descriptor::{ModuleDescriptor, MODULE_DESCRIPTOR_SIZE, MODULE_FORMAT_VERSION, MODULE_MAGIC};
use shared_proto::symbolizer::GlobalRange;
use shared_proto::{ModuleSites, ProgramId, SiteId, SiteInfo};

extern "C" {
    fn __irs_modules_begin() -> *const u8;
    fn __irs_modules_end() -> *const u8;
    /// The first byte of the executable's image and the end of its `.bss`, as the linker
    /// defines them (GNU ld, gold and lld all do).
    static __ehdr_start: u8;
    static _end: u8;
}

/// Where this process's executable image lies: its statics are named by their offset in it
/// (`shared_proto::image_range`).
pub fn image_of_this_process() -> ImageRange {
    // Only the symbols' addresses are taken (no unsafe needed for that), never their bytes read.
    let (start, end) = (std::ptr::addr_of!(__ehdr_start) as u64, std::ptr::addr_of!(_end) as u64);
    ImageRange { start, end }
}

/// Sites tables larger than this are taken for corruption.
const MAX_BLOB: u64 = 1 << 30;
const MAX_GLOBALS: u64 = 1 << 24;

#[derive(Clone, Debug, Default)]
pub struct ProgramInfo {
    pub program_id: ProgramId,
    pub sites: Vec<(SiteId, SiteInfo)>,
    pub globals: Vec<GlobalRange>,
    pub image: ImageRange,
    /// Problems with individual records (reported, the record skipped).
    pub problems: Vec<String>,
}

/// This process's module records, as the pass embedded them.
fn records_of_this_process() -> Vec<ModuleDescriptor> {
    // SAFETY: the glue returns the linker's section bounds (or null when there is none).
    let (begin, end) = unsafe { (__irs_modules_begin(), __irs_modules_end()) };
    if begin.is_null() || end.is_null() || (end as usize) < (begin as usize) {
        return Vec::new();
    }
    let len = end as usize - begin as usize;
    let mut records = Vec::new();
    let mut off = 0;
    while off + MODULE_DESCRIPTOR_SIZE <= len {
        // SAFETY: `begin + off .. + size` lies inside the section; read_unaligned copes with
        // any alignment. The fields are validated before any pointer in them is followed.
        let d: ModuleDescriptor = unsafe { std::ptr::read_unaligned(begin.add(off) as *const ModuleDescriptor) };
        records.push(d);
        off += MODULE_DESCRIPTOR_SIZE;
    }
    records
}

/// A record of this irs's format, whose module hash is part of the program's id.
fn current_format(d: &ModuleDescriptor) -> bool {
    d.magic == MODULE_MAGIC && d.version == MODULE_FORMAT_VERSION
}

/// The program's id: the hash of its modules' hashes, from every record of this irs's format
/// (as `irs` computes it from the binary's file, `irs_instrument::instrumented_binary`). No
/// site table is read: a production run under a prefix needs only this at its start, and
/// decoding every site of a real program cost milliseconds there.
pub fn program_id_of_this_process() -> ProgramId {
    id_of(&records_of_this_process())
}

fn id_of(records: &[ModuleDescriptor]) -> ProgramId {
    let mut h = StableHasher::default();
    for d in records.iter().filter(|d| current_format(d)) {
        h.write_u64(d.module_hash);
    }
    ProgramId(h.finish())
}

impl ProgramInfo {
    /// Read this process's own module records, their site tables included.
    pub fn of_this_process() -> ProgramInfo {
        ProgramInfo::from_records(&records_of_this_process())
    }

    fn from_records(records: &[ModuleDescriptor]) -> ProgramInfo {
        let mut info = ProgramInfo { program_id: id_of(records), image: image_of_this_process(), ..ProgramInfo::default() };
        for (i, d) in records.iter().enumerate() {
            if d.magic != MODULE_MAGIC {
                info.problems.push(format!("module record {i}: bad magic"));
                continue;
            }
            if d.version != MODULE_FORMAT_VERSION {
                info.problems.push(format!("module record {i}: format version {} (expected {MODULE_FORMAT_VERSION}); rebuild with this irs", d.version));
                continue;
            }
            if d.sites_blob.is_null() || d.sites_len > MAX_BLOB || d.n_globals > MAX_GLOBALS || (d.n_globals > 0 && d.globals.is_null()) {
                info.problems.push(format!("module record {i}: implausible table sizes"));
                continue;
            }
            // SAFETY: the pass emitted `sites_len` bytes at `sites_blob` in this binary (checked
            // non-null and bounded above).
            let blob = unsafe { std::slice::from_raw_parts(d.sites_blob, d.sites_len as usize) };
            let sites = match ModuleSites::from_bytes(blob) {
                Ok(s) if s.module_hash == d.module_hash && s.globals.len() as u64 == d.n_globals => s,
                Ok(_) => {
                    info.problems.push(format!("module record {i}: table does not match its record"));
                    continue;
                }
                Err(e) => {
                    info.problems.push(format!("module record {i}: corrupt site table: {e}"));
                    continue;
                }
            };
            let tag = sites.module_tag();
            for (j, g) in sites.globals.iter().enumerate() {
                // SAFETY: `globals` holds `n_globals` pointers (checked against the table).
                let addr = unsafe { *d.globals.add(j) } as u64;
                if addr != 0 && !info.globals.iter().any(|r| r.addr == addr) {
                    info.globals.push(GlobalRange { name: g.name.clone(), addr, size: g.size });
                }
            }
            info.sites.extend(sites.sites.into_iter().enumerate().map(|(j, s)| (SiteId::new(tag, j as u32), s)));
        }
        info
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn validates_records() {
        let table = ModuleSites { module_hash: 5, source: "a.c".into(), sites: vec![], globals: vec![] }.to_bytes();
        let good = ModuleDescriptor {
            magic: MODULE_MAGIC,
            version: MODULE_FORMAT_VERSION,
            reserved: 0,
            module_hash: 5,
            sites_blob: table.as_ptr(),
            sites_len: table.len() as u64,
            globals: std::ptr::null(),
            n_globals: 0,
        };
        let info = ProgramInfo::from_records(&[good]);
        assert!(info.problems.is_empty());
        assert_ne!(info.program_id.0, 0);
        let mut foreign = good;
        foreign.magic = 1;
        let mut wrong_hash = good;
        wrong_hash.module_hash = 6;
        let mut truncated = good;
        truncated.sites_len -= 1;
        let info = ProgramInfo::from_records(&[foreign, wrong_hash, truncated]);
        assert_eq!(info.problems.len(), 3, "{:?}", info.problems);
    }
}

/// Where site `id` is in the source (`file:line:col`), or `site ID` when the tables do not say;
/// for messages (the tables are read once, on first use).
pub fn site_location(id: SiteId) -> String {
    site_text(id).0
}

/// The program's global at `addr` (`name` or `name+off`), for messages; `None` outside them.
pub fn global_name(addr: u64) -> Option<String> {
    static GLOBALS: std::sync::OnceLock<shared_proto::symbolizer::Symbolizer> = std::sync::OnceLock::new();
    GLOBALS.get_or_init(|| shared_proto::symbolizer::Symbolizer::new(ProgramInfo::of_this_process().globals)).name(addr)
}

/// The program's sites, read from its tables on first use (by a message).
fn site(id: SiteId) -> Option<&'static SiteInfo> {
    static SITES: std::sync::OnceLock<std::collections::HashMap<SiteId, SiteInfo>> = std::sync::OnceLock::new();
    SITES.get_or_init(|| ProgramInfo::of_this_process().sites.into_iter().collect()).get(&id)
}

/// Where site `id` is and what it does (`call pthread_cond_wait`), for messages.
pub fn site_text(id: SiteId) -> (String, String) {
    site(id).map(|s| (s.location(), s.target.clone())).unwrap_or_else(|| (format!("site {:#x}", id.0), String::new()))
}

/// What site `id` is, in which function, where (`call pthread_cond_wait in worker at
/// pool.c:41:5`), for messages.
pub fn site_description(id: SiteId) -> Option<String> {
    site(id).map(|s| format!("{} in {} at {}", s.kind.name(), s.function, s.location()))
}
