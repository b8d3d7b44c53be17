//! Is this file a program built by `irs cc`, and what is its program id? A minimal ELF64
//! reader that looks for the `irs_modules` section every instrumented program carries (DESIGN
//! §5), and hashes the module records in it as the runtime does (so that `irs run` need not
//! start the program to learn its id).

use shared_proto::module_descriptor::{MODULE_DESCRIPTOR_SIZE, MODULE_FORMAT_VERSION, MODULE_MAGIC, MODULE_SECTION};
use shared_proto::ProgramId;
use std::path::Path;

#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum ProbeError {
    #[error("{0}: cannot read: {1}")]
    Read(String, String),
    #[error("{0}: not an ELF executable")]
    NotElf(String),
    #[error("{0}: not built by irs cc (no irs instrumentation in it); build it with `irs cc`")]
    NotInstrumented(String),
}

fn u16_at(b: &[u8], o: usize) -> Option<u64> {
    Some(u16::from_le_bytes(b.get(o..o + 2)?.try_into().ok()?) as u64)
}
fn u32_at(b: &[u8], o: usize) -> Option<u64> {
    Some(u32::from_le_bytes(b.get(o..o + 4)?.try_into().ok()?) as u64)
}
fn u64_at(b: &[u8], o: usize) -> Option<u64> {
    Some(u64::from_le_bytes(b.get(o..o + 8)?.try_into().ok()?))
}

/// The section names of a little-endian ELF64 file; `None` when it is not one or is malformed.
pub fn section_names(b: &[u8]) -> Option<Vec<String>> {
    let sections = sections_via(|at, len| b.get(at..at.checked_add(len)?).map(<[u8]>::to_vec))?;
    Some(sections.into_iter().map(|s| s.name).collect())
}

/// A section: its name, and where its bytes are in the file.
struct Section {
    name: String,
    offset: usize,
    size: usize,
}

/// The sections of an ELF64 file, reading only the parts it needs through `read(offset,
/// length)`: the header, the section table and the table of names.
fn sections_via(mut read: impl FnMut(usize, usize) -> Option<Vec<u8>>) -> Option<Vec<Section>> {
    let head = read(0, 0x40)?;
    if head.get(..4)? != b"\x7fELF" || *head.get(4)? != 2 || *head.get(5)? != 1 {
        return None;
    }
    let shoff = u64_at(&head, 0x28)? as usize;
    let shentsize = u16_at(&head, 0x3a)? as usize;
    let shnum = u16_at(&head, 0x3c)? as usize;
    let shstrndx = u16_at(&head, 0x3e)? as usize;
    if shentsize < 0x40 || shstrndx >= shnum {
        return None;
    }
    let table = read(shoff, shnum.checked_mul(shentsize)?)?;
    let sh = |i: usize| i * shentsize;
    let str_off = u64_at(&table, sh(shstrndx) + 0x18)? as usize;
    let str_size = u64_at(&table, sh(shstrndx) + 0x20)? as usize;
    // A table of section names is a few hundred bytes; a size beyond this is a corrupt file.
    if str_size > 1 << 24 {
        return None;
    }
    let strtab = read(str_off, str_size)?;
    let mut names = Vec::with_capacity(shnum);
    for i in 0..shnum {
        let name_off = u32_at(&table, sh(i))? as usize;
        let rest = strtab.get(name_off..)?;
        let end = rest.iter().position(|&c| c == 0)?;
        let (offset, size) = (u64_at(&table, sh(i) + 0x18)? as usize, u64_at(&table, sh(i) + 0x20)? as usize);
        names.push(Section { name: String::from_utf8_lossy(&rest[..end]).into_owned(), offset, size });
    }
    Some(names)
}

/// Ok when `path` is an ELF file with irs instrumentation in it (only its headers are read).
pub fn check(path: &Path) -> Result<(), ProbeError> {
    module_records(path).map(|_| ())
}

/// The program id of the instrumented program at `path`: what its runtime computes from the
/// same records (`irs_runtime::program_info`): the hash of the module hashes of its records
/// with the right magic and format version, in order.
pub fn program_id(path: &Path) -> Result<ProgramId, ProbeError> {
    let records = module_records(path)?;
    let mut h = shared_proto::hash::StableHasher::default();
    for r in records.chunks_exact(MODULE_DESCRIPTOR_SIZE) {
        let magic = u64_at(r, 0).unwrap_or(0);
        let version = u32_at(r, 8).unwrap_or(0) as u32;
        if magic == MODULE_MAGIC && version == MODULE_FORMAT_VERSION {
            h.write_u64(u64_at(r, 16).unwrap_or(0));
        }
    }
    Ok(ProgramId(h.finish()))
}

/// The bytes of the `irs_modules` section of `path`.
fn module_records(path: &Path) -> Result<Vec<u8>, ProbeError> {
    use std::os::unix::fs::FileExt;
    let p = path.display().to_string();
    let file = std::fs::File::open(path).map_err(|e| ProbeError::Read(p.clone(), e.to_string()))?;
    let len = file.metadata().map_err(|e| ProbeError::Read(p.clone(), e.to_string()))?.len();
    let read = |at: usize, n: usize| {
        if (at as u64).checked_add(n as u64)? > len {
            return None;
        }
        let mut buf = vec![0u8; n];
        file.read_exact_at(&mut buf, at as u64).ok()?;
        Some(buf)
    };
    let sections = sections_via(&read).ok_or_else(|| ProbeError::NotElf(p.clone()))?;
    let section = sections.iter().find(|s| s.name == MODULE_SECTION).ok_or_else(|| ProbeError::NotInstrumented(p.clone()))?;
    // A few records per module; a size beyond this is a corrupt file.
    if section.size > 1 << 24 {
        return Err(ProbeError::NotElf(p));
    }
    read(section.offset, section.size).ok_or(ProbeError::NotElf(p))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_real_elf_and_rejects_garbage() {
        let me = std::env::current_exe().unwrap();
        let names = section_names(&std::fs::read(&me).unwrap()).unwrap();
        assert!(names.iter().any(|n| n == ".text"));
        assert_eq!(check(&me), Err(ProbeError::NotInstrumented(me.display().to_string())));
        assert_eq!(section_names(b"#!/bin/sh\necho hi\n"), None);
        let mut truncated = std::fs::read(&me).unwrap();
        truncated.truncate(100);
        assert_eq!(section_names(&truncated), None);
        let dir = std::env::temp_dir().join(format!("irs-probe-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let (short, script) = (dir.join("truncated"), dir.join("script"));
        std::fs::write(&short, &truncated).unwrap();
        std::fs::write(&script, b"#!/bin/sh\necho hi\n").unwrap();
        assert!(matches!(check(&short), Err(ProbeError::NotElf(_))));
        assert!(matches!(check(&script), Err(ProbeError::NotElf(_))));
        assert!(matches!(check(&dir.join("missing")), Err(ProbeError::Read(..))));
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
