//! Fibers: stackful coroutines on one OS thread (DESIGN §7). EXPLORE runs every logical thread
//! of the program as a fiber, so that exactly one runs at a time by construction, a switch costs
//! a few nanoseconds instead of a futex round trip, and the process can be forked at any point
//! of an execution (fork copies only the calling OS thread, which holds every fiber).
//!
//! The switch is a small x86-64 SysV routine: it saves the callee-saved registers and the SSE/x87
//! control words on the current stack, stores the stack pointer, loads the other one and
//! restores the same. A new fiber's stack is prepared so that the first switch to it "returns"
//! into an entry routine that calls the fiber's function.

use std::ffi::c_void;

#[cfg(not(target_arch = "x86_64"))]
compile_error!("irs-runtime fibers are implemented for x86-64 only");

std::arch::global_asm!(
    ".text",
    ".global irs_fiber_switch",
    ".type irs_fiber_switch,@function",
    "irs_fiber_switch:",
    // rdi: where to store this fiber's stack pointer; rsi: the stack pointer to resume.
    "push rbp",
    "push rbx",
    "push r12",
    "push r13",
    "push r14",
    "push r15",
    "sub rsp, 8",
    "stmxcsr [rsp]",
    "fnstcw [rsp + 4]",
    "mov [rdi], rsp",
    "mov rsp, rsi",
    "ldmxcsr [rsp]",
    "fldcw [rsp + 4]",
    "add rsp, 8",
    "pop r15",
    "pop r14",
    "pop r13",
    "pop r12",
    "pop rbx",
    "pop rbp",
    "ret",
    ".size irs_fiber_switch, . - irs_fiber_switch",
    "",
    ".global irs_fiber_entry",
    ".type irs_fiber_entry,@function",
    "irs_fiber_entry:",
    // First switch into a new fiber lands here with r12 = argument, r13 = function.
    "mov rdi, r12",
    "call r13",
    // A fiber function must never return (it switches away for good instead).
    "ud2",
    ".size irs_fiber_entry, . - irs_fiber_entry",
);

extern "C" {
    fn irs_fiber_switch(save_sp: *mut *mut u8, resume_sp: *mut u8);
    fn irs_fiber_entry();
}

/// The function a new fiber runs. It must not return: when it is done it switches to another
/// fiber and is never resumed.
pub type FiberFn = extern "C" fn(*mut c_void);

/// Fiber stacks: one anonymous mapping holding `count` stacks of `size` bytes each, every one
/// with an inaccessible guard page at its low end, so an overflow faults instead of silently
/// corrupting a neighbour.
pub struct Stacks {
    base: *mut u8,
    len: usize,
    /// Bytes per stack, its guard page included.
    stride: usize,
    count: usize,
}

/// One stack of a [`Stacks`] mapping (borrowed: the mapping outlives every fiber on it).
#[derive(Clone, Copy, Debug)]
pub struct Stack {
    bottom: *mut u8,
    top: *mut u8,
}

pub const PAGE: usize = 4096;

impl Stacks {
    pub fn new(count: usize, size: usize) -> Option<Stacks> {
        let stride = size.div_ceil(PAGE) * PAGE + PAGE;
        let len = stride.checked_mul(count)?;
        // SAFETY: a fresh private anonymous mapping; no existing memory is touched.
        let base = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                len,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_NORESERVE,
                -1,
                0,
            )
        };
        if base == libc::MAP_FAILED {
            return None;
        }
        for i in 0..count {
            // SAFETY: the first page of each stack of the mapping we just made becomes its guard.
            if unsafe { libc::mprotect((base as *mut u8).add(i * stride) as *mut libc::c_void, PAGE, libc::PROT_NONE) } != 0 {
                // SAFETY: unmapping what we mapped.
                unsafe { libc::munmap(base, len) };
                return None;
            }
        }
        Some(Stacks { base: base as *mut u8, len, stride, count })
    }

    pub fn get(&self, i: usize) -> Option<Stack> {
        (i < self.count).then(|| {
            // SAFETY: both bounds lie inside (or one past) our own mapping.
            unsafe { Stack { bottom: self.base.add(i * self.stride + PAGE), top: self.base.add((i + 1) * self.stride) } }
        })
    }

    /// The whole mapping: `(start, length)`.
    pub fn region(&self) -> (usize, usize) {
        (self.base as usize, self.len)
    }
}

impl Drop for Stacks {
    fn drop(&mut self) {
        // SAFETY: unmapping exactly our mapping; no fiber runs on it any more (owner's contract).
        unsafe { libc::munmap(self.base as *mut c_void, self.len) };
    }
}

impl Stack {
    /// The highest usable address (stacks grow down).
    pub fn top(&self) -> *mut u8 {
        self.top
    }

    /// The lowest usable address (just above the guard page).
    pub fn bottom(&self) -> *mut u8 {
        self.bottom
    }
}

/// A suspended or running execution context. It does not own its stack.
pub struct Fiber {
    sp: *mut u8,
}

impl Fiber {
    /// The fiber of the code running now (the OS thread's own stack). Its `sp` is filled in when
    /// it first switches away.
    pub const fn current() -> Fiber {
        Fiber { sp: std::ptr::null_mut() }
    }

    /// Where the fiber's stack pointer was when it last switched away (null if it never did).
    pub fn sp(&self) -> *mut u8 {
        self.sp
    }

    /// A new fiber that will run `f(arg)` on `stack` when first switched to. The stack must stay
    /// mapped, and be used by no other fiber, for as long as this one may run.
    pub fn new(stack: Stack, f: FiberFn, arg: *mut c_void) -> Fiber {
        // Initial frame, matching what irs_fiber_switch pops (low to high address):
        // [mxcsr | fpu cw] r15 r14 r13 r12 rbx rbp [return address]. The stack pointer after
        // the final `ret` is the (16-aligned) top, as the SysV ABI wants before a `call`.
        let top = stack.top() as usize & !15;
        let sp = (top - 64) as *mut u64;
        let mut mxcsr: u32 = 0;
        let mut fpucw: u16 = 0;
        // SAFETY: reading the current control words into locals.
        unsafe {
            std::arch::asm!("stmxcsr [{}]", in(reg) &mut mxcsr, options(nostack));
            std::arch::asm!("fnstcw [{}]", in(reg) &mut fpucw, options(nostack));
        }
        let frame: [u64; 8] = [
            mxcsr as u64 | (fpucw as u64) << 32,
            0,                              // r15
            0,                              // r14
            f as usize as u64,              // r13: the function
            arg as u64,                     // r12: its argument
            0,                              // rbx
            0,                              // rbp
            irs_fiber_entry as *const () as usize as u64, // return address of the first switch
        ];
        // SAFETY: the 64 bytes below `top` lie inside the fresh stack mapping.
        unsafe { std::ptr::copy_nonoverlapping(frame.as_ptr(), sp, 8) };
        Fiber { sp: sp as *mut u8 }
    }
}

/// Suspend `from` (the fiber running now) and resume `to`.
///
/// # Safety
/// `from` must be the fiber executing this call, `to` a suspended fiber (new, or one that
/// switched away), and neither may be moved or dropped while suspended.
pub unsafe fn switch(from: &mut Fiber, to: &Fiber) {
    // SAFETY: per the contract; the routine saves and restores all callee-saved state.
    unsafe { irs_fiber_switch(&mut from.sp, to.sp) }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::cell::Cell;

    struct PingPong {
        main: Fiber,
        other: Fiber,
        log: Vec<u32>,
        rounds: u32,
        other_stack_addr: Cell<usize>,
    }

    extern "C" fn ping(arg: *mut c_void) {
        // SAFETY: `arg` is the PingPong owned by the test, alive for the whole test.
        let pp = unsafe { &mut *(arg as *mut PingPong) };
        let local = 0u8;
        pp.other_stack_addr.set(&local as *const u8 as usize);
        for i in 0..pp.rounds {
            pp.log.push(1000 + i);
            // Floating point state survives switches.
            let x = (i as f64 + 0.5).sqrt();
            // SAFETY: `other` is running; `main` is suspended in the test.
            unsafe { switch(&mut *(&mut pp.other as *mut Fiber), &*(&pp.main as *const Fiber)) };
            assert_eq!(x, (i as f64 + 0.5).sqrt());
        }
        pp.log.push(9999);
        // SAFETY: as above; this fiber is never resumed again.
        unsafe { switch(&mut *(&mut pp.other as *mut Fiber), &*(&pp.main as *const Fiber)) };
        unreachable!("a finished fiber is never resumed");
    }

    #[test]
    fn fibers_interleave_on_their_own_stacks() {
        let mut pp = Box::new(PingPong {
            main: Fiber::current(),
            other: Fiber::current(),
            log: Vec::new(),
            rounds: 1000,
            other_stack_addr: Cell::new(0),
        });
        let stacks = Stacks::new(2, 64 * 1024).unwrap();
        let stack = stacks.get(1).unwrap();
        let (lo, hi) = (stack.bottom() as usize, stack.top() as usize);
        assert_eq!(hi - lo, 64 * 1024);
        let arg = &mut *pp as *mut PingPong as *mut c_void;
        pp.other = Fiber::new(stack, ping, arg);
        for i in 0..=pp.rounds {
            pp.log.push(i);
            let p = &mut *pp as *mut PingPong;
            // SAFETY: the test body is the running fiber; `other` is suspended (or new).
            unsafe { switch(&mut (*p).main, &(*p).other) };
        }
        let expected: Vec<u32> = (0..1000).flat_map(|i| [i, 1000 + i]).chain([1000, 9999]).collect();
        assert_eq!(pp.log, expected);
        let addr = pp.other_stack_addr.get();
        assert!(lo <= addr && addr < hi, "the fiber ran on its own stack");
    }
}
