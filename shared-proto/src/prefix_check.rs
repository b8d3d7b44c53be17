//! Does a run respect a prefix? (DESIGN §4.) Checked on a trace recorded alongside ENFORCE:
//! rule 1, every event inside the cutoff comes after every event it requires, at the site the
//! table has; rule 2, every event outside the cutoff comes after every event inside it (the
//! barrier). Threads of the run are matched to threads of the prefix by identity (creator and
//! creation index), as the runtime matches them.
//!
//! A run during which a smaller cutoff was published may adopt it thread by thread, so the
//! barrier of neither cutoff need hold. What DESIGN §4 promises then is that the run contains
//! the smallest cutoff it adopted with the same histories: [`check_histories`] checks rule 1
//! for it, and that no event outside it that is dependent on an event inside it ran first.

use crate::dependence::{objects_of, ObjectKey};
use crate::equivalence::Equivalence;
use crate::ids::ThreadId;
use crate::prefix_segment::PrefixView;
use crate::trace::Trace;
use std::collections::HashMap;

/// Rules 1 and 2 for a run that used `cut` from start to end.
pub fn check(trace: &Trace, view: &PrefixView, cut: &[u32]) -> Result<(), String> {
    let in_prefix = rule_1(trace, view, cut)?;
    let last_prefix_event = (0..trace.events.len()).rev().find(|&i| in_prefix[i]);
    if let Some(last) = last_prefix_event {
        if let Some((i, e)) = trace.events.iter().enumerate().find(|(i, _)| *i < last && !in_prefix[*i]) {
            return Err(format!("rule 2: T{}#{} (event {i}) is outside the prefix but ran before its end (event {last})", e.tid.0, e.k));
        }
    }
    Ok(())
}

/// For a run that may have adopted `cut` (a cutoff no larger than any it used) while it ran:
/// rule 1 for `cut`, and no event outside `cut` ran before an event inside it that it is
/// dependent on under `eq` (the prefix's verification's equivalence), so the events inside have
/// their verified histories.
pub fn check_histories(trace: &Trace, view: &PrefixView, cut: &[u32], eq: Equivalence) -> Result<(), String> {
    let in_prefix = rule_1(trace, view, cut)?;
    // Objects touched so far by events outside the prefix, with the first such event, and the
    // first such event that a read commuting on the object does not commute with.
    let mut touched: HashMap<ObjectKey, usize> = HashMap::new();
    let mut written: HashMap<ObjectKey, usize> = HashMap::new();
    for (i, e) in trace.events.iter().enumerate() {
        let objects: Vec<ObjectKey> = objects_of(e).collect();
        if in_prefix[i] {
            let first = |o: &ObjectKey| if eq.commuting_read(o, e.kind) { written.get(o) } else { touched.get(o) };
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
/// requires. Returns, per event of the trace, whether it is inside the cutoff.
fn rule_1(trace: &Trace, view: &PrefixView, cut: &[u32]) -> Result<Vec<bool>, String> {
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
    Ok(inside)
}
