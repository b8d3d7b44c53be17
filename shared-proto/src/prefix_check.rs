//! Does a run respect a prefix? (DESIGN §4.) Checked on a trace recorded alongside ENFORCE:
//! rule 1, every event inside the cutoff comes after every event it requires, at the site the
//! table has; rule 2, every event outside the cutoff comes after every event inside it (the
//! barrier). Threads of the run are matched to threads of the prefix by identity (creator and
//! creation index), as the runtime matches them.

use crate::ids::ThreadId;
use crate::prefix_segment::PrefixView;
use crate::trace::Trace;
use std::collections::HashMap;

pub fn check(trace: &Trace, view: &PrefixView, cut: &[u32]) -> Result<(), String> {
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
    let mut last_prefix_event: Option<usize> = None;
    for (i, e) in trace.events.iter().enumerate() {
        let r = e.tid.index();
        if !in_prefix(r, e.k) {
            continue;
        }
        last_prefix_event = Some(i);
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
    if let Some(last) = last_prefix_event {
        if let Some((i, e)) = trace.events.iter().enumerate().find(|(i, e)| *i < last && !in_prefix(e.tid.index(), e.k)) {
            return Err(format!("rule 2: T{}#{} (event {i}) is outside the prefix but ran before its end (event {last})", e.tid.0, e.k));
        }
    }
    Ok(())
}
