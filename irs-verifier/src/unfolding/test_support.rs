//! What the unfolding's unit tests share: actions made in one line, a deterministic random
//! generator, and random runs hash-consed into an unfolding. Test code only.

use super::{Action, ActionIdx, EventIdx, Unfolding};
use crate::object_table::ObjIdx;
use crate::thread_names::StableThread;
use shared_proto::EventKind;

pub(super) fn act(u: &mut Unfolding, t: u32, objs: &[u32]) -> ActionIdx {
    let mut objects: Vec<ObjIdx> = objs.iter().map(|&o| ObjIdx(o)).collect();
    objects.sort();
    u.action(Action { thread: StableThread(t), own: ObjIdx(t), site: None, kind: EventKind::Lock, objects: objects.into(), elided: Box::new([]), choice: 0 })
}

/// A xorshift generator: the tests' runs are random, and the same every time.
pub(super) struct Rng(pub(super) u64);

impl Rng {
    pub(super) fn below(&mut self, n: u64) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0 % n
    }
}

/// One random run of `steps` events hash-consed into `u`: each by one of 3 threads (objects
/// 0–2) on its own object and one of `words` shared words (objects 10, 11, …), with
/// `two_words` a second word one time in three. The events, each with whether it was new.
pub(super) fn random_run(u: &mut Unfolding, rng: &mut Rng, steps: usize, words: u64, two_words: bool) -> Vec<(EventIdx, bool)> {
    random_run_spread(u, rng, steps, words, two_words, 1)
}

/// [`random_run`] with the words `stride` objects apart (so that they fall in different
/// chunks of the frontiers).
pub(super) fn random_run_spread(u: &mut Unfolding, rng: &mut Rng, steps: usize, words: u64, two_words: bool, stride: u64) -> Vec<(EventIdx, bool)> {
    let mut last: std::collections::HashMap<u32, EventIdx> = Default::default();
    let mut made = Vec::new();
    for _ in 0..steps {
        let t = rng.below(3) as u32;
        let mut objs = vec![t, 10 + (rng.below(words) * stride) as u32];
        if two_words && rng.below(3) == 0 {
            objs.push(10 + (rng.below(words) * stride) as u32);
        }
        objs.sort();
        objs.dedup();
        let a = act(u, t, &objs);
        let preds: Vec<Option<EventIdx>> = u.actions(a).objects.iter().map(|o| last.get(&o.0).copied()).collect();
        let (e, new) = u.event(a, &preds, EventKind::Lock, 0);
        assert_eq!(u.find(a, &preds), Some(e));
        for o in &objs {
            last.insert(*o, e);
        }
        made.push((e, new));
    }
    made
}
