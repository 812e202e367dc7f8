//! Learning which of several candidate actions is right, and how sure to be of it.
//!
//! A step offers a handful of candidates (tap this, type that, the task is done), each described
//! by the same named features. A [`Ranker`] is a conditional logit over them: one weight per
//! feature, a softmax across a step's candidates, fitted by Newton's method on steps whose right
//! candidate is known. Its top probability is then mapped through an [`Isotonic`] calibration
//! fitted on steps the ranker was *not* fitted on, so the number an agent sees is the share of
//! such answers that were right; [`threshold_for_precision`] picks the lowest calibrated value at
//! which the answers above it keep a required precision.
//!
//! Key design decision: **the crate fits and scores, nothing else.** It knows no user interface
//! and no file format beyond its own serde model, so the service that answers agents and the
//! evaluation that fits the weights run the same [`Model::decide`], and a figure measured
//! offline is the figure the server gives. Logistic models were chosen over boosted trees because
//! a few hundred labelled steps fit a few dozen weights without overfitting, and a weight can be
//! read and argued with.

mod calibration;
mod logit;
mod model;

pub use calibration::Calibration;
pub use logit::{FitOptions, Ranker};
pub use model::{Decision, Model, ModelError, best_two};

/// One step to learn from: each candidate's features, and which candidate was right (`None` when
/// none of them was: such a step still teaches calibration that a top choice there is wrong).
#[derive(Debug, Clone)]
pub struct Group {
    /// Each candidate's feature vector.
    pub candidates: Vec<Vec<f64>>,
    /// The right candidate's index, if any was right.
    pub right: Option<usize>,
}

/// The lowest calibrated confidence `t` at which the answers at or above it, among `confidences`
/// (calibrated chances of being right, on steps the models were not fitted on), are expected to
/// be right at least `precision` of the time. Expected rather than counted: on a few hundred steps
/// the count jumps with every answer near the top, the mean of calibrated chances does not.
/// `None` when no threshold reaches it.
pub fn threshold_for_precision(confidences: &[f64], precision: f64) -> Option<f64> {
    let mut sorted: Vec<f64> = confidences.to_vec();
    sorted.sort_by(|a, b| b.total_cmp(a));
    let mut sum = 0.0;
    let mut best = None;
    for (i, c) in sorted.iter().enumerate() {
        sum += c;
        let next_differs = sorted.get(i + 1).is_none_or(|n| n < c);
        if next_differs && sum >= precision * (i + 1) as f64 {
            best = Some(*c);
        }
    }
    best
}

/// The lowest calibrated confidence `t` at which the answers of *each* group (one app's steps,
/// answered by models fitted without that app) are right at least `precision` of the time,
/// counted, at `t` and at every higher threshold; a group that answers fewer than `min_answers`
/// steps at a threshold says nothing there. `None` when no threshold holds.
///
/// Why by group: a new app shifts the calibration, and steps pooled across apps let the apps the
/// model reads well hide the ones it reads badly. The threshold where the worst app still holds
/// is the one an app nobody fitted is likelier to hold at too.
pub fn threshold_holding_in_each_group(
    groups: &[Vec<(f64, bool)>],
    precision: f64,
    min_answers: usize,
) -> Option<f64> {
    let mut thresholds: Vec<f64> = groups.iter().flatten().map(|(c, _)| *c).collect();
    thresholds.sort_by(|a, b| b.total_cmp(a));
    thresholds.dedup();
    let holds = |t: f64| {
        groups.iter().all(|g| {
            let above: Vec<bool> = g.iter().filter(|(c, _)| *c >= t).map(|(_, r)| *r).collect();
            let right = above.iter().filter(|r| **r).count();
            above.len() < min_answers || right as f64 >= precision * above.len() as f64
        })
    };
    // From the top down: the last threshold before the first that fails.
    let mut lowest = None;
    for t in thresholds {
        if !holds(t) {
            break;
        }
        lowest = Some(t);
    }
    lowest
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_threshold_by_group_holds_in_the_worst_group() {
        // One app read well, one badly below 0.9: pooled the bad one would hide.
        let good: Vec<(f64, bool)> = (70..90).map(|i| (f64::from(i) / 100.0, true)).collect();
        let bad = vec![
            (0.95, true),
            (0.93, true),
            (0.91, true),
            (0.88, false),
            (0.86, true),
            (0.8, false),
        ];
        let groups = [good.clone(), bad.clone()];
        assert_eq!(
            threshold_holding_in_each_group(&groups, 0.95, 3),
            Some(0.89)
        );
        // A group too small to say anything does not hold the threshold up.
        assert_eq!(
            threshold_holding_in_each_group(&[good, bad], 0.95, 10),
            Some(0.7)
        );
        assert_eq!(
            threshold_holding_in_each_group(&[vec![(0.9, false); 5]], 0.95, 1),
            None
        );
    }

    #[test]
    fn the_threshold_keeps_expected_precision_above_it() {
        let confidences = [0.99, 0.97, 0.95, 0.9, 0.85, 0.6, 0.5];
        // Means from the top: 0.99, 0.98, 0.97, 0.9525, 0.932, 0.877, 0.823.
        assert_eq!(threshold_for_precision(&confidences, 0.95), Some(0.9));
        assert_eq!(threshold_for_precision(&confidences, 0.97), Some(0.95));
        assert_eq!(threshold_for_precision(&confidences, 0.85), Some(0.6));
        assert_eq!(threshold_for_precision(&[0.4], 0.5), None);
    }
}
