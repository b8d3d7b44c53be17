//! The site report of `irs cc --site-report FILE`: every memory access and routed call the pass
//! looked at, instrumented or skipped, and why.

use shared_proto::SiteKind;
use std::fmt::Write;

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Decision {
    Instrumented { site: u32, target: String },
    Skipped { reason: String },
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ReportEntry {
    pub location: String,
    pub function: String,
    pub kind: SiteKind,
    pub decision: Decision,
}

/// The report of one source file, as text: a header line, then one line per entry.
pub fn render(source: &str, module_tag: u32, entries: &[ReportEntry]) -> String {
    let instrumented = entries.iter().filter(|e| matches!(e.decision, Decision::Instrumented { .. })).count();
    let mut out = format!(
        "# {source}: {} accesses and calls, {instrumented} instrumented, {} skipped (module {module_tag:08x})\n",
        entries.len(),
        entries.len() - instrumented
    );
    for e in entries {
        let (verdict, why) = match &e.decision {
            Decision::Instrumented { site, target } => (format!("instrumented site {module_tag:08x}:{site}"), target.as_str()),
            Decision::Skipped { reason } => ("skipped".to_string(), reason.as_str()),
        };
        let _ = writeln!(out, "{:<24} {:<20} {:<12} {:<30} {}", e.location, e.function, e.kind.name(), verdict, why);
    }
    out
}
