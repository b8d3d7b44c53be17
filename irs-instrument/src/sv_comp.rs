//! The SV-COMP interface as the pass sees it (DESIGN §5): which calls of `__VERIFIER_*` functions
//! go to the runtime (`irs-runtime/src/program/sv_comp.rs`), and how.
//!
//! `__VERIFIER_assume`, `__VERIFIER_atomic_begin`/`_end` and `__VERIFIER_nondet_*` mean what
//! SV-COMP says whatever body a program gives them (tasks define stubs for plain builds), so
//! their calls are always routed. `__VERIFIER_assert` is routed only where the program does not
//! define it (a task's own definition calls `reach_error`, which is a violation already). A call
//! of any other function whose name starts with `__VERIFIER_atomic_` is one atomic block: the
//! call stays, between a begin and an end.

use shared_proto::SiteKind;

/// What to do with a call.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SvCall {
    Assert,
    Assume,
    AtomicBegin,
    AtomicEnd,
    /// A call of a function named `__VERIFIER_atomic_*`: wrapped in a begin and an end.
    AtomicCall,
    /// `__VERIFIER_nondet_*`; whether its integer type is unsigned, from its name.
    Nondet { unsigned: bool, bool_name: bool },
}

impl SvCall {
    pub fn site_kind(self) -> SiteKind {
        match self {
            SvCall::Assert => SiteKind::Violation,
            SvCall::Assume => SiteKind::Assume,
            SvCall::AtomicBegin | SvCall::AtomicEnd | SvCall::AtomicCall => SiteKind::Atomic,
            SvCall::Nondet { .. } => SiteKind::Nondet,
        }
    }
}

/// The runtime functions (see `irs-runtime/src/program/sv_comp.rs`).
pub const ASSERT: &str = "__irs_sv_assert";
pub const ASSUME: &str = "__irs_sv_assume";
pub const ATOMIC_BEGIN: &str = "__irs_atomic_begin";
pub const ATOMIC_END: &str = "__irs_atomic_end";
pub const NONDET: &str = "__irs_nondet";

/// How a call of `name` is handled; `defined`: the program defines the function.
pub fn classify(name: &str, defined: bool) -> Option<SvCall> {
    match name {
        "__VERIFIER_assert" if !defined => Some(SvCall::Assert),
        "__VERIFIER_assume" => Some(SvCall::Assume),
        "__VERIFIER_atomic_begin" => Some(SvCall::AtomicBegin),
        "__VERIFIER_atomic_end" => Some(SvCall::AtomicEnd),
        n if n.starts_with("__VERIFIER_atomic_") => Some(SvCall::AtomicCall),
        n => n.strip_prefix("__VERIFIER_nondet_").map(|t| {
            let unsigned = t.starts_with('u') || t == "size_t" || t == "pointer" || t == "pchar";
            Some(SvCall::Nondet { unsigned, bool_name: t == "bool" || t == "_Bool" })
        })?,
    }
}

/// The runtime's code for a nondet call's return type (`NondetType::from_code` there): 1 bool,
/// 2 pointer, 3 floating point, otherwise `bits << 8 | signed`.
pub fn nondet_type_code(call: SvCall, int_bits: Option<u32>, pointer: bool) -> u32 {
    let SvCall::Nondet { unsigned, bool_name } = call else { return 0 };
    match int_bits {
        _ if pointer => 2,
        Some(1) => 1,
        Some(_) if bool_name => 1,
        Some(bits) => bits << 8 | (!unsigned) as u32,
        None => 3,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_and_types() {
        assert_eq!(classify("__VERIFIER_assert", false), Some(SvCall::Assert));
        assert_eq!(classify("__VERIFIER_assert", true), None);
        assert_eq!(classify("__VERIFIER_assume", true), Some(SvCall::Assume));
        assert_eq!(classify("__VERIFIER_atomic_acquire", true), Some(SvCall::AtomicCall));
        assert_eq!(classify("__VERIFIER_atomic_begin", false), Some(SvCall::AtomicBegin));
        assert_eq!(classify("pthread_create", false), None);
        let int = classify("__VERIFIER_nondet_int", false).unwrap();
        let uchar = classify("__VERIFIER_nondet_uchar", false).unwrap();
        let b = classify("__VERIFIER_nondet_bool", false).unwrap();
        assert_eq!(nondet_type_code(int, Some(32), false), 32 << 8 | 1);
        assert_eq!(nondet_type_code(uchar, Some(8), false), 8 << 8);
        assert_eq!(nondet_type_code(b, Some(8), false), 1);
        assert_eq!(nondet_type_code(int, None, true), 2);
        assert_eq!(nondet_type_code(classify("__VERIFIER_nondet_double", false).unwrap(), None, false), 3);
    }
}
