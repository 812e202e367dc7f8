//! Trust: what the graph has shown on one app, per kind of answer, and how sure that record lets
//! anyone be.
//!
//! Every answer the graph gives an agent is a prediction that the next screen checks (the model's
//! own choice there, or where the graph's step led). A [`Check`] is one such comparison; an app's
//! checks of one kind of answer, on one version, make a [`Tally`]. What gates the fast path is
//! read off them: a remembered way's step goes by the way's own record ([`way_confidence`], with
//! the app's recent precision as its prior), any other answer by its confidence shrunk toward the
//! app's record ([`shrunk_confidence`]); and the breaker over the latest checks ([`Tally::trips`])
//! stops either. [`Tally::bound`], a lower confidence bound of the precision, is shown with every
//! answer for people to read; it gates nothing.
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
    /// The remembered way the answer was a step of ([`crate::way_key`]); empty when none.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub way: String,
    /// Which step of that way it was (0 its first; the way's length for its finish).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub step: u32,
    /// The graph's step changed the screen and was not undone, but the screen is not the page
    /// the answer expected: the way parted here (the app may have changed under it). Not a wrong
    /// step (`right` holds), but the way is doubted from here until a run passes here again.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub parted: bool,
    /// The answer was held back from the fast path, and the model, asked instead, did otherwise.
    /// The graph did not act, so this is no check of its record either way (an app's record
    /// grows only on answers that were taken or agreed with); a way's step it was parts there.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub declined: bool,
    /// Made by a failed verdict on the run, not by a screen: the way is doubted from this step
    /// (the run went its steps before as the passing runs did, so they keep their trust).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub from_verdict: bool,
}

fn is_zero(n: &u32) -> bool {
    *n == 0
}

impl Check {
    /// A check of an answer of `kind` given on `page`, made now.
    pub fn now(kind: AnswerKind, right: bool, page: &str) -> Check {
        Check {
            kind,
            right,
            page: page.to_string(),
            at: now_ms(),
            way: String::new(),
            step: 0,
            parted: false,
            declined: false,
            from_verdict: false,
        }
    }

    /// Whether the answer held: right, and where a way was replayed, arrived where it expected.
    pub fn held(&self) -> bool {
        self.right && !self.parted && !self.declined
    }

    /// Whether the check counts in the app's record of trust ([`Tally`]): every check but a
    /// held answer the model declined.
    pub fn counts(&self) -> bool {
        !self.declined
    }
}

/// Now, in milliseconds since 1970.
pub fn now_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as i64)
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

/// The precision the fast path is held to, on every app and kind of answer.
pub const PRECISION_GOAL: f64 = 0.95;

/// How many of an app's latest checks of a kind (on its version) the breaker reads: enough to
/// tell a bad run from bad luck (it opens at 2 wrong in 10, 3 in 20, 5 in 40), few enough that an
/// app whose answers went bad is stopped within a run or two of its suite.
pub const BREAKER_WINDOW: usize = 40;

/// Right checks an app's recent record starts with, as a way's prior: an app that has shown no
/// replay going wrong is not doubted, and one wrong check among few does not outweigh a way's
/// own confirmation.
pub const RECENT_PRIOR_CHECKS: f64 = 10.0;

/// What the app's recent precision counts for in a way's confidence, in checks: one finished
/// run confirms a way on an app whose recent precision (with its prior checks) is 0.9 or more —
/// as the peers replay a skill once it worked — and a way that parted wants as many passes
/// after as the app's record is doubtful.
pub const WAY_PRIOR_CHECKS: f64 = 1.0;

/// What a calibrated confidence counts for against the app's own record of that kind of answer,
/// in checks: the calibration (fitted on other apps) leads on an app with few checks of its own,
/// the app's own record after some ten.
pub const CALIBRATION_CHECKS: f64 = 10.0;

/// The app's recent precision on a kind of answer, as the prior of a way's confidence: its
/// latest checks with [`RECENT_PRIOR_CHECKS`] right ones.
pub fn recent_precision(recent: Tally) -> f64 {
    (recent.right() as f64 + RECENT_PRIOR_CHECKS) / (recent.checked as f64 + RECENT_PRIOR_CHECKS)
}

/// A way's confidence: the share of its steps' record that held (`passed` of `passed + parted`:
/// each step of each finished run that went it and each replayed step that arrived where it
/// expected, against each step that parted since the way was last confirmed), with the app's
/// recent precision `prior` worth [`WAY_PRIOR_CHECKS`] checks.
pub fn way_confidence(passed: u64, parted: u64, prior: f64) -> f64 {
    let n = (passed + parted) as f64 + WAY_PRIOR_CHECKS;
    (passed as f64 + WAY_PRIOR_CHECKS * prior) / n
}

/// A calibrated confidence shrunk toward the app's own recent precision on that kind of answer
/// (the calibration worth [`CALIBRATION_CHECKS`] checks): where an app's answers of a kind have
/// gone wrong more often than their calibration said, its confidence follows the app.
pub fn shrunk_confidence(calibrated: f64, recent: Tally) -> f64 {
    let n = recent.checked as f64;
    (recent.right() as f64 + CALIBRATION_CHECKS * calibrated) / (n + CALIBRATION_CHECKS)
}

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

    /// The Wilson score upper bound at [`BOUND_Z`] of this record's precision (1 with nothing
    /// checked): below [`PRECISION_GOAL`], the record shows at 95% confidence that answers of
    /// this kind go wrong more often than the goal allows.
    pub fn upper(&self) -> f64 {
        let n = self.checked as f64;
        if n <= 0.0 {
            return 1.0;
        }
        let p = self.right() as f64 / n;
        let z2 = BOUND_Z * BOUND_Z;
        let centre = p + z2 / (2.0 * n);
        let spread = BOUND_Z * (p * (1.0 - p) / n + z2 / (4.0 * n * n)).sqrt();
        ((centre + spread) / (1.0 + z2 / n)).clamp(0.0, 1.0)
    }

    /// The breaker over an app's latest checks of a kind ([`BREAKER_WINDOW`]): open when they
    /// show at 95% confidence a precision below [`PRECISION_GOAL`], with two wrong checks at
    /// least (one unlucky check, alone, does not stop a fleet). The fast path takes no answer of
    /// that kind on that app while it is open.
    pub fn trips(&self) -> bool {
        self.wrong >= 2 && self.upper() < PRECISION_GOAL
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
    /// The lower confidence bound of their precision ([`Tally::bound`]), three decimals, for
    /// people to read: what gates the fast path is the way's record or the shrunk confidence,
    /// the doubt and the breaker (see the module's documentation).
    pub bound: f64,
    /// The last check of this kind of answer on this page was wrong: whatever the record, the
    /// graph does not act here until a check is right again (what changed loses its trust, not
    /// the whole app).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub doubted: bool,
    /// The app's latest checks of this kind on this version ([`BREAKER_WINDOW`]).
    #[serde(default)]
    pub recent: Tally,
    /// The breaker is open ([`Tally::trips`] on `recent`): the fast path takes no answer of this
    /// kind on this app until its checks recover.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub tripped: bool,
    /// The answer's action is irreversible (the rule of `atlas_text::says_irreversible`: it deletes, sends, pays,
    /// orders…): the fast path takes it only as a step of a way seen to do it on this version.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub irreversible: bool,
    /// The remembered way the answer is a step of, with its own record: what the fast path
    /// goes by for it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub way: Option<crate::WayTrust>,
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
            recent: Tally::default(),
            tripped: false,
            irreversible: false,
            way: None,
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
    fn the_breaker_opens_only_where_the_recent_record_shows_wrong_answers() {
        assert!(!tally(0, 0).trips());
        assert!(
            !tally(1, 1).trips(),
            "one wrong check alone does not stop a fleet"
        );
        assert!(tally(5, 2).trips());
        assert!(!tally(10, 1).trips());
        assert!(tally(10, 2).trips());
        assert!(!tally(30, 2).trips());
        assert!(!tally(40, 4).trips());
        assert!(tally(40, 5).trips());
    }

    #[test]
    fn one_confirmation_replays_a_way_on_an_app_with_a_clean_record() {
        let clean = recent_precision(tally(30, 0));
        assert!(way_confidence(1, 0, clean) >= PRECISION_GOAL);
        assert!(way_confidence(1, 0, recent_precision(Tally::default())) >= PRECISION_GOAL);
        // An app whose recent replays went wrong one time in ten wants more of the way.
        // One wrong check among few does not hold a way back.
        assert!(way_confidence(1, 0, recent_precision(tally(2, 1))) >= PRECISION_GOAL);
        // An app whose recent replays went wrong one time in five wants more of the way.
        let shaky = recent_precision(tally(20, 4));
        assert!(way_confidence(1, 0, shaky) < PRECISION_GOAL);
        assert!(way_confidence(3, 0, shaky) >= PRECISION_GOAL);
        // A way that parted once wants its replays to pass again, several times.
        assert!(way_confidence(3, 1, clean) < PRECISION_GOAL);
        assert!(way_confidence(20, 1, clean) >= PRECISION_GOAL);
    }

    #[test]
    fn a_calibrated_confidence_follows_the_app_s_own_record() {
        assert_eq!(shrunk_confidence(0.97, Tally::default()), 0.97);
        assert!(shrunk_confidence(0.97, tally(20, 4)) < 0.9);
        assert!(shrunk_confidence(0.97, tally(100, 1)) > 0.97);
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
