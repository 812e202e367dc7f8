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

mod isotonic;
mod logit;
mod model;

pub use isotonic::Isotonic;
pub use logit::{FitOptions, Ranker};
pub use model::{Decision, Model, ModelError};

/// One step to learn from: each candidate's features, and which candidate was right (`None` when
/// none of them was: such a step still teaches calibration that a top choice there is wrong).
#[derive(Debug, Clone)]
pub struct Group {
    pub candidates: Vec<Vec<f64>>,
    pub right: Option<usize>,
}

/// The lowest calibrated confidence `t` such that the answers at or above `t` among `scored`
/// (confidence, whether the answer was right) are right at least `precision` of the time. `None`
/// when no threshold reaches it. Ties are kept together: a threshold never splits equal values.
pub fn threshold_for_precision(scored: &[(f64, bool)], precision: f64) -> Option<f64> {
    let mut sorted: Vec<(f64, bool)> = scored.to_vec();
    sorted.sort_by(|a, b| b.0.total_cmp(&a.0));
    let (mut right, mut answered) = (0usize, 0usize);
    let mut best = None;
    let mut i = 0;
    while i < sorted.len() {
        let value = sorted[i].0;
        while i < sorted.len() && sorted[i].0 == value {
            answered += 1;
            right += sorted[i].1 as usize;
            i += 1;
        }
        if right as f64 >= precision * answered as f64 {
            best = Some(value);
        }
    }
    best
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_threshold_keeps_precision_above_it() {
        let scored = [
            (0.99, true),
            (0.97, true),
            (0.95, true),
            (0.9, false),
            (0.85, true),
            (0.8, true),
            (0.5, false),
            (0.4, false),
        ];
        // At 0.8: 5 right of 6; at 0.85: 4 of 5; at 0.95: 3 of 3.
        assert_eq!(threshold_for_precision(&scored, 0.8), Some(0.8));
        assert_eq!(threshold_for_precision(&scored, 0.9), Some(0.95));
        assert_eq!(threshold_for_precision(&[(0.9, false)], 0.5), None);
    }
}
