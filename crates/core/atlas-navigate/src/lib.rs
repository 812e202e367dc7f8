//! The navigation engine: from a screen and an intent to where to go and what to do next, over
//! one app's graph and the index of its pages' and intents' texts.
//!
//! Three ways of knowing answer an agent, tried in this order by [`Navigator::get_next_action`]:
//! remembered sessions of the same task ([`memory`]), the app's labels read against the intent
//! by a learned, calibrated model ([`ground`]), and a registered intent's page with the planned
//! way there ([`Navigator::query_path`]). [`Navigator::get_rag_context`] puts the same knowledge
//! into a prompt.
//!
//! Key design decision: **a pure engine, with no lock and no store.** It reads the graph through
//! [`GraphView`], asking for it only for the moments it plans or searches, and embeds texts (which
//! may call a model) between those moments. The service implements the view over its locked,
//! durable state, so readers never hold its lock while a model runs; an evaluation or a test can
//! hand it a plain [`Snapshot`] and get the answers the server would give.

mod ground;
mod index;
mod index_image;
mod item;
mod map;
mod memory;
mod next;
mod query_path;
mod rag;

use std::ops::Deref;

use atlas_graph::Graph;
use atlas_text::Embedder;

pub use atlas_api::navigation::{
    AlternativePath, Basis, CandidateAction, NextAction, NextActionRequest, NextActionResponse,
    PageSummary, PathInfo, PathStep, QueryPathRequest, QueryPathResponse,
};
pub use atlas_api::rag::{
    FailedCase, HistoricalCases, RagContext, RagContextRequest, RagContextResponse,
    RecommendedPath, RelevantPage, SuccessfulCase, SuggestedAction,
};
pub use ground::{
    FEATURES, Meaning, SHIPPED as SHIPPED_MODEL, SHIPPED_E5 as SHIPPED_E5_MODEL, doubt_in_english,
};
pub use index::{
    Doc, DocKind, DocTexts, Hit, Prepared, Query, TextIndex, intent_key, normalize, page_key,
};
pub use map::{MAX_ROUTE_STEPS, MAX_ROUTES, MapRoute};
pub use memory::{RememberedWay, doubts_of_failed_run, remembered_ways};

/// The grounding model: the ranker's model over [`FEATURES`].
pub use atlas_rank::Model as GroundingModel;

/// Seed 000's default `max_steps`.
pub const DEFAULT_MAX_STEPS: usize = 10;

/// What the engine reads: the graph of every app and the index of their texts.
pub trait Known {
    /// Every app's pages and transitions.
    fn graph(&self) -> &Graph;
    /// The pages' and intents' texts, searchable.
    fn text(&self) -> &TextIndex;
}

/// Where the engine finds what is known, for as long as it holds what [`GraphView::read`] gave.
/// The engine holds it briefly and never while it embeds.
pub trait GraphView {
    /// What a read sees.
    type Known: Known;
    /// The graph and its index as they are now.
    fn read(&self) -> impl Deref<Target = Self::Known> + '_;
}

/// A graph and its index borrowed as they are: the view with no lock, for a caller that owns them.
#[derive(Clone, Copy)]
pub struct Snapshot<'a> {
    /// The graph.
    pub graph: &'a Graph,
    /// Its texts' index.
    pub text: &'a TextIndex,
}

impl Known for Snapshot<'_> {
    fn graph(&self) -> &Graph {
        self.graph
    }

    fn text(&self) -> &TextIndex {
        self.text
    }
}

impl<'a> GraphView for Snapshot<'a> {
    type Known = Snapshot<'a>;

    fn read(&self) -> impl Deref<Target = Snapshot<'a>> + '_ {
        self
    }
}

/// The engine over one view: what it reads, the embedder its index was built with, the label
/// meanings grounding compares, and the grounding model in use (the shipped one when `None`).
pub struct Navigator<'a, V> {
    /// Where the graph is read.
    pub view: &'a V,
    /// The embedder the index was built with (queries must be embedded alike).
    pub embedder: &'a dyn Embedder,
    /// Label meanings for grounding.
    pub meaning: &'a Meaning,
    /// A grounding model fitted on the operator's apps, instead of the shipped one.
    pub grounding: Option<&'a GroundingModel>,
}

/// How sure a step with these reports is: its smoothed success rate, discounted while evidence
/// is thin (no reports: a step never taken).
pub(crate) fn confidence(counts: &atlas_model::Counts) -> f64 {
    let evidence = (counts.success + counts.fail) as f64;
    counts.smoothed_success_rate() * (0.6 + 0.4 * (evidence / (evidence + 3.0)))
}

/// A score as answers show it: three decimals.
pub fn round3(x: f64) -> f64 {
    (x * 1000.0).round() / 1000.0
}
