//! Trust: what the graph has shown on one app, per kind of answer, and how sure that record lets
//! anyone be.
//!
//! Every answer the graph gives an agent is a prediction that the next screen checks (the model's
//! own choice there, or where the graph's step led). A [`Check`] is one such comparison; an app's
//! checks of one kind of answer, on one version, make a [`Tally`]; and [`Tally::bound`] is a
//! lower confidence bound of the precision those checks show. The fast path acts on a kind of
//! answer only where that bound reaches its target.
//!
//! Key design decision: **the evidence is the app's own.** A calibrated confidence is fitted on
//! other apps, and on an app unlike them it is wrong in ways no pooled figure shows (seven
//! development apps predicted 0.95+, apps nobody had seen gave 0.87). Other apps lend only a
//! prior worth [`PRIOR_CHECKS`] checks — a few steps' worth, never enough alone to act on.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// What an answer of the graph rested on, as trust is kept for it: `memory` (a step of a
/// remembered run of the task), `path` (a step of the planned way to a registered intent's page),
/// `labels` (a widget read against the task), `finish` (a remembered run ended here).
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize, JsonSchema,
)]
#[serde(rename_all = "snake_case")]
// Each value is told in the enum's doc: a doc comment on a variant would turn the JSON
// Schema's `enum` into a `oneOf` of constants.
#[allow(missing_docs)]
pub enum AnswerKind {
    Memory,
    Path,
    Labels,
    Finish,
}

impl AnswerKind {
    /// Every kind, in order.
    pub const ALL: [AnswerKind; 4] = [
        AnswerKind::Memory,
        AnswerKind::Path,
        AnswerKind::Labels,
        AnswerKind::Finish,
    ];

    /// Its name as answers show it.
    pub fn as_str(self) -> &'static str {
        match self {
            AnswerKind::Memory => "memory",
            AnswerKind::Path => "path",
            AnswerKind::Labels => "labels",
            AnswerKind::Finish => "finish",
        }
    }
}

/// One answer of the graph, checked against what happened next.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Check {
    /// What the answer rested on.
    pub kind: AnswerKind,
    /// Whether what happened next agreed with it.
    pub right: bool,
    /// The page the answer was given on.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub page: String,
    /// When it was checked, in milliseconds since 1970 (UTC): the latest check of a page is the
    /// one that counts for doubt.
    #[serde(default)]
    pub at: i64,
}

/// The checks of one kind of answer on one app (and version).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Tally {
    /// Answers checked.
    pub checked: u64,
    /// Of those, answers what happened next disagreed with.
    pub wrong: u64,
}

/// How many checks the other apps' record counts for on an app: enough to start from, never
/// enough to act on alone (with none of its own, an app's bound stays near 0.6).
pub const PRIOR_CHECKS: f64 = 4.0;

/// How many checks an app's other versions' record counts for on a new version: a clean record
/// (one wrong in 200) keeps the fast path, and the new version's own wrong answers outweigh it
/// within a few (one in its first three takes it away).
pub const INHERITED_CHECKS: f64 = 80.0;

/// The one-sided normal quantile of the bound: 95% confidence that the precision is at least
/// the bound. With no wrong answer an app needs about fifty checks of a kind to reach 0.95.
pub const BOUND_Z: f64 = 1.645;

impl Tally {
    /// Adds one check.
    pub fn add(&mut self, right: bool) {
        self.checked += 1;
        self.wrong += u64::from(!right);
    }

    /// Adds another tally.
    pub fn join(&mut self, other: Tally) {
        self.checked += other.checked;
        self.wrong += other.wrong;
    }

    /// Takes away a tally added before.
    pub fn remove(&mut self, other: Tally) {
        self.checked = self.checked.saturating_sub(other.checked);
        self.wrong = self.wrong.saturating_sub(other.wrong);
    }

    /// Answers what happened next agreed with.
    pub fn right(&self) -> u64 {
        self.checked - self.wrong.min(self.checked)
    }

    /// A lower confidence bound of the precision: the Wilson score bound at [`BOUND_Z`] of this
    /// record, with what the app's other versions showed (`earlier`) counted as at most
    /// [`INHERITED_CHECKS`] more checks, and what other apps showed (`others`) as at most
    /// [`PRIOR_CHECKS`], each at its own precision. Wilson's bound holds its level even for few
    /// checks and precisions near 1, where the normal approximation claims far too much; 0 with
    /// nothing checked anywhere.
    pub fn bound(&self, earlier: Tally, others: Tally) -> f64 {
        let lent = |t: Tally, most: f64| {
            let weight = most.min(t.checked as f64);
            let rate = if t.checked == 0 {
                0.0
            } else {
                t.right() as f64 / t.checked as f64
            };
            (weight, rate * weight)
        };
        let (w1, r1) = lent(earlier, INHERITED_CHECKS);
        let (w2, r2) = lent(others, PRIOR_CHECKS);
        let n = self.checked as f64 + w1 + w2;
        if n <= 0.0 {
            return 0.0;
        }
        let p = (self.right() as f64 + r1 + r2) / n;
        let z2 = BOUND_Z * BOUND_Z;
        let centre = p + z2 / (2.0 * n);
        let spread = BOUND_Z * (p * (1.0 - p) / n + z2 / (4.0 * n * n)).sqrt();
        ((centre - spread) / (1.0 + z2 / n)).clamp(0.0, 1.0)
    }
}

/// How much an app's record lets the graph be trusted on one kind of answer, as answers show it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Trust {
    /// The kind of answer.
    pub kind: AnswerKind,
    /// Answers of this kind checked on this app (and version).
    pub checked: u64,
    /// Of those, answers what happened next disagreed with.
    pub wrong: u64,
    /// The lower confidence bound of their precision ([`Tally::bound`]), three decimals: the
    /// fast path takes this kind of answer here only when it reaches its target.
    pub bound: f64,
    /// The last check of this kind of answer on this page was wrong: whatever the record, the
    /// graph does not act here until a check is right again (what changed loses its trust, not
    /// the whole app).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub doubted: bool,
}

impl Trust {
    /// The trust a tally gives, with the app's other versions' record and other apps' (see
    /// [`Tally::bound`]).
    pub fn of(kind: AnswerKind, tally: Tally, earlier: Tally, others: Tally) -> Trust {
        Trust {
            kind,
            checked: tally.checked,
            wrong: tally.wrong,
            bound: (tally.bound(earlier, others) * 1000.0).floor() / 1000.0,
            doubted: false,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tally(checked: u64, wrong: u64) -> Tally {
        Tally { checked, wrong }
    }

    /// Other apps' record: thousands of checks, 3% wrong.
    const OTHERS: Tally = Tally {
        checked: 10_000,
        wrong: 300,
    };

    #[test]
    fn an_app_with_no_record_of_its_own_is_not_trusted_whatever_other_apps_showed() {
        assert_eq!(tally(0, 0).bound(Tally::default(), Tally::default()), 0.0);
        assert!(tally(0, 0).bound(Tally::default(), OTHERS) < 0.7);
        assert!(tally(5, 0).bound(Tally::default(), tally(1_000_000, 0)) < 0.9);
    }

    #[test]
    fn a_clean_record_earns_the_fast_path_after_about_fifty_checks() {
        let first =
            |others| (0..400).find(|&n| tally(n, 0).bound(Tally::default(), others) >= 0.95);
        for others in [OTHERS, Tally::default()] {
            assert!(matches!(first(others), Some(45..=60)), "{others:?}");
        }
        // Other apps that were wrong half the time make an app prove more.
        assert!(matches!(first(tally(100, 50)), Some(100..=130)));
    }

    #[test]
    fn wrong_answers_keep_the_bound_down() {
        // 0.9 precision never reaches 0.95, however many checks.
        assert!(tally(10_000, 1_000).bound(Tally::default(), OTHERS) < 0.9);
        // One wrong in a hundred does, with enough checks.
        assert!(tally(50, 1).bound(Tally::default(), OTHERS) < 0.95);
        assert!(tally(1_000, 10).bound(Tally::default(), OTHERS) > 0.975);
        // More checks, same rate: a tighter bound.
        assert!(
            tally(200, 20).bound(Tally::default(), OTHERS)
                > tally(20, 2).bound(Tally::default(), OTHERS)
        );
    }

    #[test]
    fn a_new_version_keeps_a_clean_record_until_its_own_checks_say_otherwise() {
        let clean = tally(1_000, 5);
        assert!(tally(0, 0).bound(clean, OTHERS) >= 0.95);
        assert!(tally(3, 1).bound(clean, OTHERS) < 0.95);
        assert!(tally(10, 2).bound(clean, OTHERS) < 0.93);
        // A record that was never good lends nothing worth acting on.
        assert!(tally(0, 0).bound(tally(1_000, 100), OTHERS) < 0.9);
    }

    #[test]
    fn tallies_add_and_remove() {
        let mut t = Tally::default();
        t.add(true);
        t.add(false);
        t.join(tally(3, 1));
        assert_eq!(t, tally(5, 2));
        t.remove(tally(3, 1));
        assert_eq!(t, tally(2, 1));
        assert_eq!(t.right(), 1);
    }
}
