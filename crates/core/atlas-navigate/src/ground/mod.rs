//! Navigation grounded in labels: for an instruction nobody has done before, which action of the
//! current page (or "done") the app's labels point to, and how likely that is to be right.
//!
//! Grounding runs in four stages, one module each, with plain widget facts ([`facts`]) beneath
//! them all:
//! - [`reading`]: the instruction read against the app and the session — how rare each word is
//!   among the app's labels, which parts of it are done, what remains to be said;
//! - [`features`]: every candidate answer (each widget here tapped or typed into, the first step
//!   of the way to each widget elsewhere that says part of what remains, "done") described by
//!   the same named features, with [`fill`] choosing values for fields and [`habits`] telling
//!   what the app's remembered tasks did on this page;
//! - [`meaning`]: how alike in meaning each label and the instruction are (e5, or character
//!   n-grams), computed outside the graph's lock;
//! - [`choose`]: a conditional logit fitted on demonstrated tasks weighs the candidates; its top
//!   probability, calibrated on apps it was not fitted on, is the answer's confidence;
//! - [`doubt`]: below the threshold, why the answer is unsure.
//!
//! Key design decision: **no rule here decides; a learned model does.** Hand-written rules read
//! off one benchmark's errors did not hold on apps nobody read (precision when sure fell from 0.95
//! to 0.83), so every such signal became a feature whose weight is fitted, and the confidence an
//! agent sees is a probability measured on held-out apps, from which it can pick its own
//! threshold.

mod choose;
pub(crate) mod doubt;
pub(crate) mod facts;
mod features;
mod fill;
mod habits;
mod meaning;
mod reading;

use atlas_graph::AppGraph;
use atlas_model::TraceStep;

pub use choose::{SHIPPED, SHIPPED_E5};
pub(crate) use doubt::Doubt;
pub use doubt::in_english as doubt_in_english;
pub use features::FEATURES;
use features::Feature;
pub(crate) use features::Proposal;
pub use meaning::Meaning;

use crate::memory::Recall;

/// Candidates shown beside an answer when not asked to explain them all.
const SHOWN: usize = 3;

/// One candidate as an agent or the evaluation may see it.
pub(crate) struct Considered {
    pub(crate) proposal: Proposal,
    /// The ranker's share of probability for this candidate among this step's.
    pub(crate) probability: f64,
    /// Its features, when asked to explain.
    pub(crate) features: Option<Vec<f64>>,
}

/// What grounding concluded: the answer (or why it is unsure), the calibrated chance that its best
/// candidate is right, and the best candidates (all of them, with features, when explaining).
pub(crate) struct Grounded {
    pub(crate) answer: Result<Recall, Doubt>,
    pub(crate) confidence: Option<f64>,
    pub(crate) considered: Vec<Considered>,
}

/// Candidates weighed on the graph, waiting for their labels' meanings.
pub(crate) struct Weighed {
    candidates: Vec<features::Candidate>,
    /// The part of the instruction now open, which labels are compared with.
    open_part: String,
}

impl Weighed {
    /// The texts whose embeddings the meanings need.
    pub(crate) fn texts(&self) -> Vec<&str> {
        self.candidates
            .iter()
            .flat_map(|c| c.label.iter().chain(&c.goal))
            .map(String::as_str)
            .chain(std::iter::once(self.open_part.as_str()))
            .collect()
    }
}

/// Everything of grounding that reads the graph: call under its lock.
pub(crate) fn weigh(
    app: &AppGraph,
    intent: &str,
    current_page: &str,
    taken: &[TraceStep],
) -> Weighed {
    let reading = reading::Reading::new(app, intent, current_page, taken);
    let open_part = reading
        .current_part
        .and_then(|k| reading.part_texts.get(k))
        .cloned()
        .unwrap_or_else(|| intent.to_string());
    Weighed {
        candidates: features::candidates(&reading),
        open_part,
    }
}

/// The answer for weighed candidates once `meaning` has learned their texts.
/// `chosen` is the operator's model, if any; otherwise the shipped one for the meanings in use.
pub(crate) fn conclude(
    weighed: Weighed,
    meaning: &Meaning,
    chosen: Option<&atlas_rank::Model>,
    explain: bool,
) -> Grounded {
    let Weighed {
        mut candidates,
        open_part,
    } = weighed;
    for c in &mut candidates {
        let of = |text: &Option<String>| {
            text.as_deref()
                .map_or(0.0, |t| meaning.similarity(t, &open_part))
        };
        let (label, goal) = (of(&c.label), of(&c.goal));
        c.x.set(Feature::Meaning, label);
        c.x.set(Feature::GoalMeaning, goal);
    }
    let model = chosen.or_else(|| choose::model(meaning.is_e5()));
    let (answer, decision) = choose::choose(model, &candidates);
    let confidence = decision.as_ref().map(|d| d.confidence);
    let p = decision.map_or_else(|| vec![0.0; candidates.len()], |d| d.probabilities);
    let mut considered: Vec<Considered> = candidates
        .into_iter()
        .zip(p)
        .map(|(c, probability)| Considered {
            proposal: c.proposal,
            probability,
            features: explain.then(|| c.x.to_vec()),
        })
        .collect();
    if !explain {
        considered.sort_by(|a, b| b.probability.total_cmp(&a.probability));
        considered.truncate(SHOWN);
    }
    Grounded {
        answer,
        confidence,
        considered,
    }
}
