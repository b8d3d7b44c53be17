//! Where two runs of one schedule part (DESIGN §7: an execution is a function of its schedule,
//! so two runs of one schedule that differ mean something outside irs's control). Says which
//! event is the first to differ and what each run did there, in the words of `irs trace show`:
//! thread, kind, object, source location.

use shared_proto::dependence::ObjectKey;
use shared_proto::explore_protocol::Hello;
use shared_proto::{Event, LogicalAddr, Outcome, Region, Trace};
use std::sync::Arc;

/// One event as a person reads it: `T1 store x at prog.c:12:5 (main)`.
fn describe(trace: &Trace, e: &Event) -> String {
    let sym = trace.symbolizer();
    let mut object = trace.object_name(&sym, &e.object);
    if object == "-" {
        if let shared_proto::ObjectRef::Memory { addr, .. } | shared_proto::ObjectRef::Mutex { addr, .. } = e.object {
            object = format!("{addr:#x}");
        }
    }
    let site = e.site.and_then(|id| trace.sites.iter().find(|(i, _)| *i == id)).map(|(_, s)| format!(" at {} ({})", s.location(), s.function));
    format!("{} {} {}{}", e.tid, e.kind.name(), object, site.unwrap_or_default())
}

/// An event of a run in progress (no trace yet), described as [`first_difference`] does.
pub fn describe_event(hello: &Hello, e: &Event) -> String {
    let t = Trace {
        program_id: hello.program_id,
        argv: Vec::new(),
        sites: Arc::new(hello.sites.clone()),
        globals: Arc::new(hello.globals.clone()),
        image: hello.image,
        threads: Vec::new(),
        events: Vec::new(),
        steps: Vec::new(),
        outcome: Outcome::Incomplete,
    };
    describe(&t, e)
}

/// An event an earlier run predicted (an event of the unfolding: its kind, site and objects,
/// the memory words it accesses included).
pub fn describe_predicted(hello: &Hello, kind: shared_proto::EventKind, site: Option<shared_proto::SiteId>, objects: &[ObjectKey]) -> String {
    let sym = shared_proto::symbolizer::Symbolizer::new(hello.globals.clone());
    let names: Vec<String> = objects
        .iter()
        .filter(|k| !matches!(k, ObjectKey::Thread(_)))
        .map(|k| match *k {
            // A word is keyed by its index (its offset / 4).
            ObjectKey::Word(Region::Static, w) => sym.name(w * 4).unwrap_or_else(|| format!("{:#x}", w * 4)),
            ObjectKey::Mutex(Region::Static, a) => sym.name(a).unwrap_or_else(|| format!("{a:#x}")),
            ObjectKey::Word(region, w) => LogicalAddr { region, offset: w * 4 }.to_string(),
            ObjectKey::Mutex(region, offset) => LogicalAddr { region, offset }.to_string(),
            other => format!("{other:?}"),
        })
        .collect();
    let site = site.and_then(|id| hello.sites.iter().find(|(i, _)| *i == id)).map(|(_, s)| format!(" at {} ({})", s.location(), s.function));
    format!("{} {}{}", kind.name(), names.join(", "), site.unwrap_or_default())
}

/// How `b` differs from `a`, or `None` if they are the same run.
pub fn first_difference(a: &Trace, b: &Trace) -> Option<String> {
    let at = a.events.iter().zip(&b.events).position(|(x, y)| x != y);
    let side = |t: &Trace, i: usize| match t.events.get(i) {
        Some(e) => describe(t, e),
        None => format!("nothing more (it ended: {})", t.outcome),
    };
    match at {
        Some(i) => {
            let (x, y) = (side(a, i), side(b, i));
            // The same description: they differ in what it leaves out (a raw address).
            let (x, y) = if x == y { (format!("{x} [{:?}]", a.events[i].object), format!("{y} [{:?}]", b.events[i].object)) } else { (x, y) };
            Some(format!("they part at event {i}: the first run did {x}, the second {y}"))
        }
        None if a.events.len() != b.events.len() => {
            let i = a.events.len().min(b.events.len());
            Some(format!("they part at event {i}: the first run did {}, the second {}", side(a, i), side(b, i)))
        }
        None if a.outcome != b.outcome => Some(format!("the same events, but the first run ended in `{}`, the second in `{}`", a.outcome, b.outcome)),
        None => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use shared_proto::{EventKind, ObjectRef, Outcome, ThreadId};

    fn trace(events: Vec<Event>, outcome: Outcome) -> Trace {
        Trace {
            program_id: Default::default(),
            argv: Vec::new(),
            sites: Default::default(),
            globals: Default::default(),
            image: Default::default(),
            threads: Vec::new(),
            events,
            steps: Vec::new(),
            outcome,
        }
    }

    fn ev(tid: u32, k: u32, kind: EventKind, addr: u64) -> Event {
        Event { tid: ThreadId(tid), k, site: None, kind, object: ObjectRef::Memory { addr, size: 4, logical: None }, value: None }
    }

    #[test]
    fn names_the_first_event_that_differs_and_both_sides() {
        let load = EventKind::Access(shared_proto::AccessKind::Load);
        let a = trace(vec![ev(0, 0, EventKind::Create, 0), ev(0, 1, load, 0x10)], Outcome::Exit(0));
        let b = trace(vec![ev(0, 0, EventKind::Create, 0), ev(0, 1, load, 0x20)], Outcome::Exit(0));
        assert_eq!(first_difference(&a, &a.clone()), None);
        let d = first_difference(&a, &b).unwrap();
        assert!(d.contains("event 1") && d.contains("0x10") && d.contains("0x20") && d.contains("T0"), "{d}");
        let short = trace(vec![ev(0, 0, EventKind::Create, 0)], Outcome::Exit(0));
        let d = first_difference(&a, &short).unwrap();
        assert!(d.contains("event 1") && d.contains("nothing more"), "{d}");
    }
}
