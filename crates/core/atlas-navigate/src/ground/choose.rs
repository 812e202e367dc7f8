//! The choice: the shipped model weighs every candidate, and its calibrated confidence in the best
//! one decides between answering and saying why it is unsure.

use std::sync::OnceLock;

use atlas_rank::{Decision, Model};

use super::doubt::Doubt;
use super::features::{Candidate, FEATURES, Feature, Proposal};
use crate::memory::Recall;

/// The models fitted by `atlas eval droidtask --leave-one-app-out --fit-out` on the development
/// apps (see docs/evaluations.md): weights, calibration and threshold, this one for meanings from the
/// built-in embedder and [`SHIPPED_E5`] for meanings from e5.
pub const SHIPPED: &str = include_str!("model.json");
/// The shipped model for meanings from e5.
pub const SHIPPED_E5: &str = include_str!("model-e5.json");

/// A shipped model, read once. A model that does not match [`FEATURES`] is caught by the tests;
/// should one ship anyway, every answer is "unsure" rather than a wrong guess.
pub(crate) fn model(e5: bool) -> Option<&'static Model> {
    static MODELS: OnceLock<[Option<Model>; 2]> = OnceLock::new();
    let read = |text: &str| match Model::from_json(text, FEATURES) {
        Ok(model) => Some(model),
        Err(e) => {
            tracing::error!("a grounding model cannot be used: {e}");
            None
        }
    };
    MODELS.get_or_init(|| [read(SHIPPED), read(SHIPPED_E5)])[e5 as usize].as_ref()
}

/// The answer the model gives for these candidates, and its decision (for explaining).
pub(crate) fn choose(
    model: Option<&Model>,
    candidates: &[Candidate],
) -> (Result<Recall, Doubt>, Option<Decision>) {
    let xs: Vec<Vec<f64>> = candidates.iter().map(|c| c.x.to_vec()).collect();
    let Some(decision) = model.and_then(|m| m.decide(&xs)) else {
        return (Err(Doubt::NothingSays), None);
    };
    let best = &candidates[decision.best];
    if decision.sure {
        let recall = best.proposal.clone().into_recall(decision.confidence);
        return (Ok(recall), Some(decision));
    }
    (Err(why_unsure(candidates, &decision)), Some(decision))
}

/// The most telling reason the best candidate falls short.
fn why_unsure(candidates: &[Candidate], decision: &Decision) -> Doubt {
    let best = &candidates[decision.best];
    let label = best.proposal.label().to_string();
    let says_something = candidates
        .iter()
        .any(|c| c.x.get(Feature::Route) > 0.0 || c.x.get(Feature::Own) > 0.0);
    let anything_anywhere = candidates
        .iter()
        .any(|c| c.x.get(Feature::FinishLeft) > 0.0);
    if !says_something {
        return if anything_anywhere {
            Doubt::NoWay
        } else if matches!(best.proposal, Proposal::Finish) {
            Doubt::NotDone
        } else {
            Doubt::NothingSays
        };
    }
    if matches!(best.proposal, Proposal::Finish) {
        return Doubt::NotDone;
    }
    if best.x.get(Feature::SameLabel) > 0.0 {
        return Doubt::SameLabel(label);
    }
    if best.x.get(Feature::Coincidence) > 0.0 {
        return Doubt::Coincidence(label);
    }
    if let Some(second) = decision
        .second
        .filter(|_| decision.raw_second * 2.0 >= decision.raw)
    {
        return Doubt::TooClose(label, candidates[second].proposal.label().to_string());
    }
    Doubt::Unlikely(label, decision.confidence)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_shipped_models_speak_of_the_features_computed() {
        for text in [SHIPPED, SHIPPED_E5] {
            let model = Model::from_json(text, FEATURES).unwrap();
            assert!(
                model.threshold > 0.5 && model.threshold <= 1.0,
                "{}",
                model.note
            );
        }
    }
}
