//! Platt scaling of the ranker's best candidate: P(right) = σ(a + b·logit(p₁) + c·lead), where p₁
//! is the ranker's probability of its best candidate and `lead` its log-odds over the runner-up.
//! Three parameters fitted on steps the ranker was not fitted on give a smooth, monotone map that
//! a few hundred steps pin down; a step function (isotonic regression) fitted on as few jumped
//! between plateaus, and the threshold with it.

use serde::{Deserialize, Serialize};

use crate::{FitOptions, Group, Ranker};

/// Platt scaling of a step's best and runner-up probabilities (see the module's documentation).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Calibration {
    /// a, b, c.
    pub weights: Vec<f64>,
}

/// What the calibration reads of a step: the best candidate's probability and the runner-up's.
pub fn evidence(best: f64, second: f64) -> Vec<f64> {
    let logit = |p: f64| {
        let p = p.clamp(1e-6, 1.0 - 1e-6);
        (p / (1.0 - p)).ln()
    };
    let top = logit(best);
    let lead = if second > 0.0 {
        (top - logit(second)).min(12.0)
    } else {
        12.0
    };
    vec![1.0, top, lead]
}

impl Calibration {
    /// No calibration: the ranker's own probability of its best candidate.
    pub fn identity() -> Calibration {
        Calibration {
            weights: vec![0.0, 1.0, 0.0],
        }
    }

    /// Fits on (best probability, runner-up probability, whether the best was right).
    pub fn fit(scored: &[(f64, f64, bool)]) -> Calibration {
        // A binary logistic regression is a conditional logit between the evidence and nothing.
        let groups: Vec<Group> = scored
            .iter()
            .map(|(best, second, right)| Group {
                candidates: vec![evidence(*best, *second), vec![0.0; 3]],
                right: Some(if *right { 0 } else { 1 }),
            })
            .collect();
        let options = FitOptions {
            l2: 1e-3,
            ..Default::default()
        };
        Calibration {
            weights: Ranker::fit(&groups, 3, options).weights,
        }
    }

    /// The calibrated chance that the best candidate is right.
    pub fn apply(&self, best: f64, second: f64) -> f64 {
        let z = evidence(best, second);
        let s: f64 = self.weights.iter().zip(&z).map(|(w, x)| w * x).sum();
        1.0 / (1.0 + (-s).exp())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn calibration_learns_that_confident_rankers_are_right_more_often() {
        // Right exactly when the ranker gave its best more than 0.6.
        let scored: Vec<(f64, f64, bool)> = (1..100)
            .map(|i| {
                let p = i as f64 / 100.0;
                (p, (1.0 - p) / 2.0, p > 0.6)
            })
            .collect();
        let c = Calibration::fit(&scored);
        assert!(c.apply(0.9, 0.05) > 0.9, "{c:?}");
        assert!(c.apply(0.3, 0.3) < 0.1, "{c:?}");
        assert!(c.apply(0.7, 0.2) > c.apply(0.65, 0.2));
    }
}
