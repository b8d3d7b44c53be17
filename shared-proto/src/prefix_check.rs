//! Does a run respect a prefix? (DESIGN §4.) Checked on a trace recorded alongside ENFORCE:
//! the run contains the prefix's cutoff with the same histories. Rule 1: every event inside the
//! cutoff comes after every event it requires, at the site the table has. And no event outside
//! the cutoff that is dependent on an event inside it ran first (the guarantee the barrier gave
//! by holding every event outside until the whole prefix had run, and that the runtime now keeps
//! by holding each until the prefix events it depends on have: docs/src/enforce.md, "Past
//! the cut"). Threads of the run are matched to threads of the prefix by identity (creator and
//! creation index), as the runtime matches them.
//!
//! A run during which a smaller cutoff was published may adopt it thread by thread: what DESIGN
//! §4 promises then is that the run contains the smallest cutoff it adopted with the same
//! histories, which is what [`check_histories`] checks for it.

use crate::access_kind::AccessKind;
use crate::dependence::{objects_of, ObjectKey};
use crate::event::EventKind;
use crate::prefix_objects::Entries;
use crate::equivalence::Equivalence;
use crate::ids::ThreadId;
use crate::prefix_segment::PrefixView;
use crate::trace::Trace;
use std::collections::HashMap;

/// For a run that may have adopted `cut` (a cutoff no larger than any it used) while it ran:
/// rule 1 for `cut`, and no event outside `cut` ran before an event inside it that it is
/// dependent on under `eq` (the prefix's verification's equivalence), so the events inside have
/// their verified histories.
///
/// An update inside the prefix that the verified trace's labels call a read (a compare-exchange
/// that failed there; the prefix's object index records each event's labels) is checked as a
/// read: the runtime lets a read outside the prefix pass it, as the verification did.
pub fn check_histories(trace: &Trace, view: &PrefixView, cut: &[u32], eq: Equivalence) -> Result<(), String> {
    let (in_prefix, to_prefix) = rule_1(trace, view, cut)?;
    // Per prefix event, whether the index has it writing something.
    let mut writes: HashMap<(u32, u32), bool> = HashMap::new();
    if let Some(index) = view.object_index() {
        for i in 0..index.len() {
            let x = index.get(i);
            *writes.entry((x.thread, x.k)).or_default() |= x.writes;
        }
    }
    // Objects touched so far by events outside the prefix, with the first such event, and the
    // first such event that a read commuting on the object does not commute with.
    let mut touched: HashMap<ObjectKey, usize> = HashMap::new();
    let mut written: HashMap<ObjectKey, usize> = HashMap::new();
    for (i, e) in trace.events.iter().enumerate() {
        let objects: Vec<ObjectKey> = objects_of(e).collect();
        if in_prefix[i] {
            let p = to_prefix[e.tid.index()].expect("in the prefix");
            let kind = match e.kind {
                EventKind::Access(AccessKind::Rmw | AccessKind::CmpXchg) if writes.get(&(p, e.k)) == Some(&false) => EventKind::Access(AccessKind::UnchangedUpdate),
                k => k,
            };
            let first = |o: &ObjectKey| if eq.commuting_read(o, kind) { written.get(o) } else { touched.get(o) };
            if let Some((o, j)) = objects.iter().find_map(|o| first(o).map(|j| (o, *j))) {
                let x = &trace.events[j];
                return Err(format!(
                    "T{}#{} (event {i}) is inside the prefix but T{}#{} (event {j}), outside it, touched its object {o:?} first",
                    e.tid.0, e.k, x.tid.0, x.k
                ));
            }
        } else {
            for o in objects {
                if !eq.commuting_read(&o, e.kind) {
                    written.entry(o).or_insert(i);
                }
                touched.entry(o).or_insert(i);
            }
        }
    }
    Ok(())
}

/// Rule 1: every event inside `cut` is at the table's site and ran after every event it
/// requires. Returns, per event of the trace, whether it is inside the cutoff, and per thread of
/// the run its thread in the prefix.
fn rule_1(trace: &Trace, view: &PrefixView, cut: &[u32]) -> Result<(Vec<bool>, Vec<Option<u32>>), String> {
    // Run thread -> prefix thread.
    let mut by_identity: HashMap<(u32, u32), u32> = HashMap::new();
    for p in 1..view.threads() as u32 {
        let info = view.thread_info(ThreadId(p));
        if let Some(parent) = info.parent {
            by_identity.insert((parent.0, info.nth_child), p);
        }
    }
    let mut to_prefix: Vec<Option<u32>> = Vec::with_capacity(trace.threads.len());
    for t in &trace.threads {
        let p = match t.parent {
            None => Some(0),
            Some(parent) => to_prefix.get(parent.index()).copied().flatten().and_then(|pp| by_identity.get(&(pp, t.nth_child)).copied()),
        };
        to_prefix.push(p);
    }
    let mut to_run: HashMap<u32, usize> = HashMap::new();
    for (r, p) in to_prefix.iter().enumerate() {
        if let Some(p) = p {
            to_run.insert(*p, r);
        }
    }
    // Positions of each run thread's events in the trace.
    let mut pos: Vec<Vec<usize>> = vec![Vec::new(); trace.threads.len()];
    for (i, e) in trace.events.iter().enumerate() {
        pos[e.tid.index()].push(i);
    }
    let in_prefix = |r: usize, k: u32| to_prefix[r].is_some_and(|p| k < cut[p as usize]);
    let mut inside = Vec::with_capacity(trace.events.len());
    for (i, e) in trace.events.iter().enumerate() {
        let r = e.tid.index();
        inside.push(in_prefix(r, e.k));
        if !in_prefix(r, e.k) {
            continue;
        }
        let p = to_prefix[r].expect("in the prefix");
        let (site, reqs) = view.row(ThreadId(p), e.k);
        if site != e.site {
            return Err(format!("T{r}#{} is at another site than the prefix's T{p}#{}: the run left the trace", e.k, e.k));
        }
        for q in reqs {
            let before = to_run.get(&q.thread.0).and_then(|&ru| pos[ru].get(q.count as usize - 1).copied());
            match before {
                Some(j) if j < i => {}
                _ => return Err(format!("rule 1: T{r}#{} (event {i}) ran before T{}#{}, which it requires", e.k, q.thread.0, q.count - 1)),
            }
        }
    }
    Ok((inside, to_prefix))
}
