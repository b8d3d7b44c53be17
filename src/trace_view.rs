//! Traces for people (`irs trace show`): a table with thread, k, kind, object, function and
//! source location per event, or (`--by-thread`) each thread's events in program order.

use shared_proto::Trace;
use std::fmt::Write;

/// One line per event.
pub fn table(trace: &Trace) -> String {
    let sites = trace.site_table();
    let sym = trace.symbolizer();
    let mut out = String::new();
    let _ = writeln!(
        out,
        "# program {}  events {}  threads {}  outcome {}",
        trace.program_id,
        trace.events.len(),
        trace.threads.len(),
        trace.outcome
    );
    if !trace.argv.is_empty() {
        let _ = writeln!(out, "# argv {}", trace.argv.join(" "));
    }
    let _ = writeln!(out, "{:>6}  {:<6} {:>5}  {:<13} {:<24} {:<20} {}", "#", "thread", "k", "kind", "object", "function", "location");
    let mut steps = trace.steps.iter().peekable();
    for (i, e) in trace.events.iter().enumerate() {
        // EXPLORE traces: the scheduling decision before the operation, when it had a choice.
        if let Some(step) = steps.next_if(|s| s.first_event as usize == i) {
            if step.enabled.len() > 1 {
                let en: Vec<String> = step.enabled.iter().map(|p| p.tid.to_string()).collect();
                let _ = writeln!(out, "{:>6}  -- enabled {}, chose {}", "", en.join(" "), step.chosen);
            }
        }
        let site = e.site.and_then(|s| sites.get(&s).copied());
        let mut object = trace.object_name(&sym, &e.object);
        if object == "-" {
            if let shared_proto::ObjectRef::Memory { addr, .. } | shared_proto::ObjectRef::Mutex { addr, .. } = e.object {
                object = format!("{addr:#x}");
            }
        }
        let (function, location) = site.map(|s| (s.function.as_str(), s.location())).unwrap_or(("", String::new()));
        let _ = writeln!(
            out,
            "{:>6}  {:<6} {:>5}  {:<13} {:<24} {:<20} {}",
            i,
            e.tid.to_string(),
            e.k,
            e.kind.name(),
            object,
            function,
            location
        );
    }
    let counts = trace.per_thread_counts();
    let _ = writeln!(
        out,
        "# events per thread: {}",
        counts.iter().enumerate().map(|(t, c)| format!("T{t}={c}")).collect::<Vec<_>>().join(" ")
    );
    out
}

/// Each thread's events in program order, as `kind object` lines (the format of the tests'
/// expectation files).
pub fn by_thread(trace: &Trace) -> String {
    let sym = trace.symbolizer();
    let mut per: Vec<Vec<String>> = vec![Vec::new(); trace.threads.len()];
    for e in &trace.events {
        per[e.tid.index()].push(format!("{} {}", e.kind.name(), trace.object_name(&sym, &e.object)));
    }
    let outcome = match &trace.outcome {
        shared_proto::Outcome::Violation { kind, .. } => format!("violation {}", kind.name()),
        o => o.to_string(),
    };
    let mut out = format!("outcome: {outcome}\n");
    for (t, events) in per.iter().enumerate() {
        let _ = writeln!(out, "thread {t}:");
        for e in events {
            let _ = writeln!(out, "  {e}");
        }
    }
    out
}
