//! Is this file a program built by `irs cc`? A minimal ELF64 reader that looks for the
//! `irs_modules` section every instrumented program carries (DESIGN §5).

use shared_proto::module_descriptor::MODULE_SECTION;
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
    if b.get(..4)? != b"\x7fELF" || *b.get(4)? != 2 || *b.get(5)? != 1 {
        return None;
    }
    let shoff = u64_at(b, 0x28)? as usize;
    let shentsize = u16_at(b, 0x3a)? as usize;
    let shnum = u16_at(b, 0x3c)? as usize;
    let shstrndx = u16_at(b, 0x3e)? as usize;
    if shentsize < 0x40 || shstrndx >= shnum {
        return None;
    }
    let sh = |i: usize| shoff.checked_add(i.checked_mul(shentsize)?);
    let str_off = u64_at(b, sh(shstrndx)? + 0x18)? as usize;
    let str_size = u64_at(b, sh(shstrndx)? + 0x20)? as usize;
    let strtab = b.get(str_off..str_off.checked_add(str_size)?)?;
    let mut names = Vec::with_capacity(shnum);
    for i in 0..shnum {
        let name_off = u32_at(b, sh(i)?)? as usize;
        let rest = strtab.get(name_off..)?;
        let end = rest.iter().position(|&c| c == 0)?;
        names.push(String::from_utf8_lossy(&rest[..end]).into_owned());
    }
    Some(names)
}

/// Ok when `path` is an ELF file with irs instrumentation in it.
pub fn check(path: &Path) -> Result<(), ProbeError> {
    let p = path.display().to_string();
    let bytes = std::fs::read(path).map_err(|e| ProbeError::Read(p.clone(), e.to_string()))?;
    let names = section_names(&bytes).ok_or_else(|| ProbeError::NotElf(p.clone()))?;
    if names.iter().any(|n| n == MODULE_SECTION) {
        Ok(())
    } else {
        Err(ProbeError::NotInstrumented(p))
    }
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
    }
}
