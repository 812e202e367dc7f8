//! A fitted model as it ships and loads: named features, ranker weights, the calibration of its
//! top choice and the confidence below which its answer is "unsure".

use serde::{Deserialize, Serialize};

use crate::{Calibration, Ranker};

/// Why a model cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum ModelError {
    /// It was fitted on other features than the ones computed.
    #[error("the model's features {found:?} are not the ones computed {expected:?}")]
    Features {
        /// The features computed, in order.
        expected: Vec<String>,
        /// The model's.
        found: Vec<String>,
    },
    /// Its weights do not match its features.
    #[error("the model has {weights} weights for {features} features")]
    Shape {
        /// How many weights it has.
        weights: usize,
        /// How many features it names.
        features: usize,
    },
    /// Its JSON cannot be read.
    #[error("cannot read the model: {0}")]
    Parse(#[source] serde_json::Error),
}

/// A fitted ranker with its calibration and threshold: what decides a step.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Model {
    /// Feature names, in the order of every candidate's vector.
    pub features: Vec<String>,
    /// The weights.
    pub ranker: Ranker,
    /// Maps the ranker's best and runner-up probabilities to the chance the best is right, fitted
    /// on steps the ranker was not fitted on.
    pub calibration: Calibration,
    /// Calibrated confidence at and above which the model answers.
    pub threshold: f64,
    /// What it was fitted on, for people.
    #[serde(default)]
    pub note: String,
}

/// The model's choice among a step's candidates.
#[derive(Debug, Clone, PartialEq)]
pub struct Decision {
    /// The chosen candidate.
    pub best: usize,
    /// The runner-up, if any.
    pub second: Option<usize>,
    /// Calibrated probability that `best` is right.
    pub confidence: f64,
    /// The ranker's own probability of `best`.
    pub raw: f64,
    /// The ranker's own probability of `second` (0 without one).
    pub raw_second: f64,
    /// Whether `confidence` reaches the model's threshold.
    pub sure: bool,
    /// Every candidate's probability, in the candidates' order.
    pub probabilities: Vec<f64>,
}

/// The most and the second most probable candidate (the earlier one among equals).
pub fn best_two(p: &[f64]) -> Option<(usize, Option<usize>)> {
    let mut order: Vec<usize> = (0..p.len()).collect();
    order.sort_by(|a, b| p[*b].total_cmp(&p[*a]).then(a.cmp(b)));
    Some((*order.first()?, order.get(1).copied()))
}

impl Model {
    /// Reads a model and checks that it speaks of exactly `expected` features.
    pub fn from_json(text: &str, expected: &[&str]) -> Result<Model, ModelError> {
        let model: Model = serde_json::from_str(text).map_err(ModelError::Parse)?;
        model.check(expected)?;
        Ok(model)
    }

    /// Whether the model was fitted on `expected`, the features computed, and its weights fit.
    pub fn check(&self, expected: &[&str]) -> Result<(), ModelError> {
        if self
            .features
            .iter()
            .map(String::as_str)
            .ne(expected.iter().copied())
        {
            return Err(ModelError::Features {
                expected: expected.iter().map(|s| s.to_string()).collect(),
                found: self.features.clone(),
            });
        }
        if self.ranker.weights.len() != self.features.len() {
            return Err(ModelError::Shape {
                weights: self.ranker.weights.len(),
                features: self.features.len(),
            });
        }
        Ok(())
    }

    /// The best candidate and how sure to be of it; `None` without candidates.
    pub fn decide(&self, candidates: &[Vec<f64>]) -> Option<Decision> {
        let p = self.ranker.probabilities(candidates);
        let (best, second) = best_two(&p)?;
        let raw_second = second.map_or(0.0, |s| p[s]);
        let confidence = self.calibration.apply(p[best], raw_second);
        Some(Decision {
            best,
            second,
            confidence,
            raw: p[best],
            raw_second,
            // Two candidates the ranker cannot tell apart are a coin toss, however likely the
            // pair: never sure.
            sure: confidence >= self.threshold && p[best] - raw_second > 1e-9,
            probabilities: p,
        })
    }
}
