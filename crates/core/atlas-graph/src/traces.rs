//! An app's remembered sessions, kept within a bound.
//!
//! A fleet reports sessions for as long as it runs, and every session is a [`Trace`] of up to a
//! few hundred steps: unbounded, they grow an app's memory and its files without end (a few
//! hours of a small fleet once made one app's `graph.json` outgrow the folder's size limit). The
//! steps are counted into their transitions' statistics when they are reported, so forgetting a
//! trace loses no statistic, only a way to replay the session. What is forgotten first is the
//! oldest trace of an intent that has a newer one, so every intent keeps its latest session
//! while any intent has more than one; only when each intent is down to one does the oldest go.
//!
//! Which traces are kept depends only on which were put and in what order, so replaying the
//! journal in its order after a crash keeps the same ones.

use std::collections::{BTreeSet, HashMap};

use atlas_model::{AnswerKind, Tally, Trace};

/// Most sessions an app remembers (see the module's doc).
pub const MAX_TRACES_PER_APP: usize = 2_000;

/// The sessions of one app, oldest first by when their last step was reported.
#[derive(Debug, Clone, Default)]
pub(crate) struct Traces {
    by_id: HashMap<String, Trace>,
    /// (updated_at, trace_id) of every trace: the age order.
    by_age: BTreeSet<(String, String)>,
    /// How many traces each intent has.
    per_intent: HashMap<String, usize>,
    /// The checks the kept traces hold, per version and kind of answer: the app's trust.
    trust: HashMap<(Option<String>, AnswerKind), Tally>,
    /// The latest check of each kind of answer on each page: when, and whether it was right.
    /// The latest by time, whatever order the traces came in, so a restart from a checkpoint
    /// sees the same.
    last_check: HashMap<(String, AnswerKind), (LastAt, bool)>,
    /// Every kept check per version and kind of answer, in the order they were made, with
    /// whether it was right: the breaker reads the latest.
    timeline: HashMap<(Option<String>, AnswerKind), Timeline>,
}

/// Checks in the order they were made, with whether each was right.
type Timeline = BTreeSet<(LastAt, bool)>;

/// When a check was made: its time, and (for checks of the same millisecond) its trace's id and
/// its place among the trace's checks.
type LastAt = (i64, String, usize);

impl Traces {
    pub(crate) fn get(&self, trace_id: &str) -> Option<&Trace> {
        self.by_id.get(trace_id)
    }

    pub(crate) fn values(&self) -> impl Iterator<Item = &Trace> {
        self.by_id.values()
    }

    /// The checks of one kind of answer the kept sessions on `version` hold.
    pub(crate) fn trust(&self, version: Option<&str>, kind: AnswerKind) -> Tally {
        self.trust
            .get(&(version.map(str::to_string), kind))
            .copied()
            .unwrap_or_default()
    }

    /// The latest [`atlas_model::BREAKER_WINDOW`] checks of one kind of answer on `version`.
    pub(crate) fn recent(&self, version: Option<&str>, kind: AnswerKind) -> Tally {
        let mut tally = Tally::default();
        if let Some(line) = self.timeline.get(&(version.map(str::to_string), kind)) {
            for (_, right) in line.iter().rev().take(atlas_model::BREAKER_WINDOW) {
                tally.add(*right);
            }
        }
        tally
    }

    /// Whether the latest check of `kind` on `page` was wrong.
    pub(crate) fn doubted(&self, page: &str, kind: AnswerKind) -> bool {
        self.last_check
            .get(&(page.to_string(), kind))
            .is_some_and(|(_, right)| !right)
    }

    /// Every version's and kind's checks.
    pub(crate) fn trust_all(&self) -> impl Iterator<Item = (Option<&str>, AnswerKind, Tally)> + '_ {
        self.trust
            .iter()
            .map(|((version, kind), tally)| (version.as_deref(), *kind, *tally))
    }

    /// Adds (or with `remove`, takes away) a trace's checks from the app's trust.
    fn count_checks(&mut self, trace: &Trace, remove: bool) {
        let mut per_kind = [Tally::default(); AnswerKind::ALL.len()];
        for (k, check) in trace.checks.iter().enumerate() {
            if !check.counts() {
                continue;
            }
            per_kind[check.kind as usize].add(check.right);
            let at = (check.at, trace.trace_id.clone(), k);
            let line = (trace.app_version.clone(), check.kind);
            if remove {
                if let Some(checks) = self.timeline.get_mut(&line) {
                    checks.remove(&(at.clone(), check.right));
                    if checks.is_empty() {
                        self.timeline.remove(&line);
                    }
                }
            } else {
                self.timeline
                    .entry(line)
                    .or_default()
                    .insert((at.clone(), check.right));
            }
            if check.page.is_empty() {
                continue;
            }
            let key = (check.page.clone(), check.kind);
            match self.last_check.get(&key) {
                // A trace that goes takes its verdicts with it.
                Some((last, _)) if remove && last.1 == trace.trace_id => {
                    self.last_check.remove(&key);
                }
                Some((last, _)) if remove || *last > at => {}
                _ if remove => {}
                _ => {
                    self.last_check.insert(key, (at, check.right));
                }
            }
        }
        for (kind, counted) in AnswerKind::ALL.into_iter().zip(per_kind) {
            if counted.checked == 0 {
                continue;
            }
            let key = (trace.app_version.clone(), kind);
            let tally = self.trust.entry(key.clone()).or_default();
            if remove {
                tally.remove(counted);
                if tally.checked == 0 {
                    self.trust.remove(&key);
                }
            } else {
                tally.join(counted);
            }
        }
    }

    /// Adds or replaces a trace, then forgets the oldest while there are more than `bound`;
    /// true when the trace is new.
    pub(crate) fn put(&mut self, trace: Trace, bound: usize) -> bool {
        let new = match self.by_id.remove(&trace.trace_id) {
            Some(old) => {
                self.unindex(&old);
                false
            }
            None => true,
        };
        self.by_age
            .insert((trace.updated_at.clone(), trace.trace_id.clone()));
        *self.per_intent.entry(trace.intent.clone()).or_default() += 1;
        self.count_checks(&trace, false);
        self.by_id.insert(trace.trace_id.clone(), trace);
        while self.by_id.len() > bound.max(1) {
            self.forget_oldest();
        }
        new
    }

    /// Changes the trace of that id in place (made by `make` if there is none), then keeps the
    /// bound as [`Traces::put`] does.
    pub(crate) fn change(
        &mut self,
        trace_id: &str,
        make: impl FnOnce() -> Trace,
        change: impl FnOnce(&mut Trace),
        bound: usize,
    ) {
        let mut trace = match self.by_id.remove(trace_id) {
            Some(old) => {
                self.unindex(&old);
                old
            }
            None => make(),
        };
        change(&mut trace);
        self.put(trace, bound);
    }

    fn unindex(&mut self, trace: &Trace) {
        self.count_checks(trace, true);
        self.by_age
            .remove(&(trace.updated_at.clone(), trace.trace_id.clone()));
        if let Some(n) = self.per_intent.get_mut(&trace.intent) {
            *n -= 1;
            if *n == 0 {
                self.per_intent.remove(&trace.intent);
            }
        }
    }

    /// Forgets the oldest trace whose intent has another, else the oldest of all. Scanning from
    /// the oldest, the first trace whose intent has more than one is its intent's oldest, never
    /// its newest.
    fn forget_oldest(&mut self) {
        let victim = self
            .by_age
            .iter()
            .find(|(_, id)| {
                self.by_id
                    .get(id)
                    .is_some_and(|t| self.per_intent.get(&t.intent).is_some_and(|n| *n > 1))
            })
            .or_else(|| self.by_age.first())
            .map(|(_, id)| id.clone());
        if let Some(trace) = victim.and_then(|id| self.by_id.remove(&id)) {
            self.unindex(&trace);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn trace(id: &str, intent: &str, at: u32) -> Trace {
        Trace {
            trace_id: id.into(),
            app_id: "a".into(),
            session_id: id.into(),
            intent: intent.into(),
            steps: vec![],
            finished: None,
            finish_message: None,
            app_version: None,
            checks: vec![],
            ends_on: None,
            verdict: None,
            created_at: format!("2026-01-01T00:00:{at:02}Z"),
            updated_at: format!("2026-01-01T00:00:{at:02}Z"),
        }
    }

    fn kept(traces: &Traces) -> Vec<String> {
        let mut ids: Vec<String> = traces.values().map(|t| t.trace_id.clone()).collect();
        ids.sort();
        ids
    }

    #[test]
    fn the_oldest_trace_of_an_intent_with_a_newer_one_is_forgotten_first() {
        let mut traces = Traces::default();
        traces.put(trace("t1", "rare", 1), 3);
        traces.put(trace("t2", "often", 2), 3);
        traces.put(trace("t3", "often", 3), 3);
        traces.put(trace("t4", "often", 4), 3);
        // t1 is the oldest, but its intent's only session: t2 goes.
        assert_eq!(kept(&traces), ["t1", "t3", "t4"]);
        traces.put(trace("t5", "third", 5), 3);
        assert_eq!(kept(&traces), ["t1", "t4", "t5"]);
        // Every intent down to one: the oldest of all goes.
        traces.put(trace("t6", "fourth", 6), 3);
        assert_eq!(kept(&traces), ["t4", "t5", "t6"]);
    }

    #[test]
    fn a_trace_put_again_is_replaced_and_ages_by_its_last_step() {
        let mut traces = Traces::default();
        assert!(traces.put(trace("t1", "x", 1), 2));
        assert!(traces.put(trace("t2", "x", 2), 2));
        // t1's session goes on: it is now the newest, and t2 the oldest.
        assert!(!traces.put(trace("t1", "x", 3), 2));
        traces.put(trace("t3", "x", 4), 2);
        assert_eq!(kept(&traces), ["t1", "t3"]);
        assert_eq!(traces.by_id.len(), 2);
        assert_eq!(traces.per_intent["x"], 2);
    }
}
