//! The C ABI between instrumented code and irs-runtime: symbol names and the small integer
//! codes the pass passes to the callbacks. One definition for both sides.

use crate::access_kind::AccessKind;
use crate::outcome::ViolationKind;

/// Thread-local `i8`: non-zero while the thread has something to record or enforce.
pub const THREAD_ACTIVE_FLAG: &str = "__irs_thread_active";
/// `void __irs_before(u64 site, void *addr, u32 info)`, `info = kind_code << 24 | size`.
pub const CB_BEFORE: &str = "__irs_before";
/// `void __irs_before_store(u64 site, void *addr, u32 info, u64 value)`: a store of at most 8
/// bytes whose value the pass knows (its bits, zero-extended).
pub const CB_BEFORE_STORE: &str = "__irs_before_store";
/// `void __irs_before_update(u64 site, void *addr, u32 info, u64 a, u64 b)`: a cmpxchg of at
/// most 8 bytes (`a` expected, `b` desired) or an atomicrmw the value model knows (`a` its
/// operand, `b` one of the `RMW_*` codes).
pub const CB_BEFORE_UPDATE: &str = "__irs_before_update";
/// The atomicrmw operations [`CB_BEFORE_UPDATE`] passes (`b`).
pub const RMW_XCHG: u64 = 1;
pub const RMW_ADD: u64 = 2;
pub const RMW_SUB: u64 = 3;
/// `void __irs_after(u64 site)`.
pub const CB_AFTER: &str = "__irs_after";
/// `void __irs_on_violation(u64 site, u32 kind, char *assertion, char *file, u32 line, char *function)`.
pub const CB_VIOLATION: &str = "__irs_on_violation";
/// At the top of a spin candidate's header (the pass's `spin_loops`).
pub const LOOP_HEAD: &str = "__irs_loop_head";
/// At the top of the header of a spin candidate that waits on a condition variable (the
/// runtime's default policy does not count a thread there as waiting: see `spin_watch`).
pub const WAIT_LOOP_HEAD: &str = "__irs_wait_loop_head";
/// On an edge into a spin candidate's header from outside the loop.
pub const LOOP_ENTER: &str = "__irs_loop_enter";
/// `int __irs_start(int argc, char **argv, char **envp, int (*user_main)(int, char **, char **))`.
pub const RUNTIME_START: &str = "__irs_start";
/// What the pass renames a program's `main` to.
pub const USER_MAIN: &str = "__irs_user_main";

/// The largest access size `info` can carry; larger sizes are clamped.
pub const MAX_INFO_SIZE: u32 = 0x00ff_ffff;

pub fn encode_info(kind: AccessKind, size: u64) -> u32 {
    (kind.code() as u32) << 24 | size.min(MAX_INFO_SIZE as u64) as u32
}

/// `(access kind, size)` from an `info` argument; `None` for a code no pass emits.
pub fn decode_info(info: u32) -> Option<(AccessKind, u32)> {
    Some((AccessKind::from_code((info >> 24) as u8)?, info & MAX_INFO_SIZE))
}

pub fn violation_code(kind: ViolationKind) -> u32 {
    match kind {
        ViolationKind::Assert => 0,
        ViolationKind::Abort => 1,
        ViolationKind::ReachError => 2,
    }
}

pub fn violation_kind(code: u32) -> Option<ViolationKind> {
    Some(match code {
        0 => ViolationKind::Assert,
        1 => ViolationKind::Abort,
        2 => ViolationKind::ReachError,
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    #[test]
    fn info_round_trips_for_every_access_kind() {
        for kind in AccessKind::ALL {
            assert_eq!(decode_info(encode_info(kind, 8)), Some((kind, 8)));
        }
        assert_eq!(decode_info(encode_info(AccessKind::Store, 1 << 40)).unwrap().1, MAX_INFO_SIZE);
        assert!(decode_info(0xff00_0000).is_none());
        for k in [ViolationKind::Assert, ViolationKind::Abort, ViolationKind::ReachError] {
            assert_eq!(violation_kind(violation_code(k)), Some(k));
        }
    }
}
