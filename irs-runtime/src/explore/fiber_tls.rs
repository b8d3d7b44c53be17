//! Per-fiber thread-local storage (DESIGN §7: "what the C library keeps per OS thread must be
//! kept per fiber"). All fibers share one OS thread, so they share its TLS. To give each logical
//! thread its own, a switch saves the running fiber's copy of the executable's static TLS block
//! (the program's `__thread` variables and irs-runtime's own per-thread state live there) and
//! loads the next fiber's; errno, which lives in the C library's TLS, is saved and restored
//! the same way. A new fiber starts from the block's initialisation image, as a new thread does.

use std::ffi::{c_int, c_void};

/// The executable's TLS segment and the calling OS thread's instance of it.
#[derive(Clone, Copy, Debug)]
pub struct StaticTls {
    init: *const u8,
    filesz: usize,
    memsz: usize,
    block: *mut u8,
}

struct Found(Option<StaticTls>);

extern "C" fn find_executable_tls(info: *mut libc::dl_phdr_info, _size: usize, data: *mut c_void) -> c_int {
    // SAFETY: dl_iterate_phdr passes a valid info record; `data` is our `Found`.
    let (info, found) = unsafe { (&*info, &mut *(data as *mut Found)) };
    // The first object reported is the executable itself.
    for i in 0..info.dlpi_phnum as usize {
        // SAFETY: `dlpi_phdr` has `dlpi_phnum` entries.
        let ph = unsafe { &*info.dlpi_phdr.add(i) };
        if ph.p_type == libc::PT_TLS && !info.dlpi_tls_data.is_null() {
            found.0 = Some(StaticTls {
                init: (info.dlpi_addr + ph.p_vaddr) as *const u8,
                filesz: ph.p_filesz as usize,
                memsz: ph.p_memsz as usize,
                block: info.dlpi_tls_data as *mut u8,
            });
        }
    }
    1 // stop after the executable
}

impl StaticTls {
    /// The executable's TLS as seen by the calling OS thread; `None` when it has none.
    pub fn of_executable() -> Option<StaticTls> {
        let mut found = Found(None);
        // SAFETY: the callback only reads the records it is given.
        unsafe { libc::dl_iterate_phdr(Some(find_executable_tls), &mut found as *mut Found as *mut c_void) };
        found.0
    }

    pub fn size(&self) -> usize {
        self.memsz
    }

    /// What a new thread's block starts as: the initialisation image, then zeros.
    pub fn fresh(&self) -> Box<[u8]> {
        let mut v = vec![0u8; self.memsz].into_boxed_slice();
        // SAFETY: the image is `filesz` readable bytes of the executable's mapping.
        v[..self.filesz].copy_from_slice(unsafe { std::slice::from_raw_parts(self.init, self.filesz) });
        v
    }

    /// Copy the live block into `to`.
    ///
    /// # Safety
    /// Must run on the OS thread the block belongs to, with `to.len() == self.size()`.
    pub unsafe fn save(&self, to: &mut [u8]) {
        // SAFETY: per the contract the live block has `memsz` bytes.
        unsafe { std::ptr::copy_nonoverlapping(self.block, to.as_mut_ptr(), self.memsz) }
    }

    /// Overwrite the live block with `from`.
    ///
    /// # Safety
    /// As for [`save`](Self::save); no reference into the block may be held across the call.
    pub unsafe fn restore(&self, from: &[u8]) {
        // SAFETY: per the contract.
        unsafe { std::ptr::copy_nonoverlapping(from.as_ptr(), self.block, self.memsz) }
    }
}

/// The calling thread's errno.
pub fn errno() -> c_int {
    // SAFETY: __errno_location always returns the calling thread's errno slot.
    unsafe { *libc::__errno_location() }
}

pub fn set_errno(v: c_int) {
    // SAFETY: as above.
    unsafe { *libc::__errno_location() = v }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::cell::Cell;

    thread_local! {
        static X: Cell<u64> = const { Cell::new(7) };
    }

    #[test]
    fn blocks_are_saved_restored_and_start_fresh() {
        let tls = StaticTls::of_executable().expect("a Rust test binary has static TLS");
        X.with(|x| x.set(1));
        let mut first = vec![0u8; tls.size()];
        // SAFETY: this thread's block, sizes match; no references into it are held.
        unsafe {
            tls.save(&mut first);
            tls.restore(&tls.fresh());
        }
        let fresh_value = X.with(|x| x.get());
        X.with(|x| x.set(2));
        let mut second = vec![0u8; tls.size()];
        // SAFETY: as above.
        unsafe {
            tls.save(&mut second);
            tls.restore(&first);
        }
        assert_eq!(fresh_value, 7, "a fresh block holds the initial value");
        assert_eq!(X.with(|x| x.get()), 1);
        // SAFETY: as above.
        unsafe { tls.restore(&second) };
        assert_eq!(X.with(|x| x.get()), 2);
        // SAFETY: as above; leave the thread as we found it.
        unsafe { tls.restore(&first) };
        set_errno(5);
        assert_eq!(errno(), 5);
    }
}
