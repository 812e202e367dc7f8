//! `get_rag_context` (seed 000 §3.3): what an LLM is told to decide a step — the pages like the
//! intent, the recommended path, remembered cases — as a prompt and structured.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::navigation::PathStep;

/// `get_rag_context`'s input.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct RagContextRequest {
    /// The app.
    pub app_id: String,
    /// The user's intent or question.
    pub query: String,
    /// Where the agent is; the home page when omitted.
    #[serde(default)]
    #[schemars(length(min = 1), extend("pattern" = atlas_model::NON_BLANK_TEXT))]
    pub current_page: Option<String>,
}

/// A page that matches the query.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct RelevantPage {
    /// The page's id.
    pub page_id: String,
    /// Its name.
    pub page_name: String,
    /// What it is for.
    pub description: String,
    /// How well it matches the query (0..1).
    pub relevance_score: f64,
}

/// A path the context recommends.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct RecommendedPath {
    /// `main`, `alt1`, `alt2`.
    pub path_id: String,
    /// Its steps.
    pub steps: Vec<PathStep>,
    /// How sure it is.
    pub confidence: f64,
    /// Its steps' reported success rates multiplied.
    pub success_rate: f64,
}

/// A past session that worked.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct SuccessfulCase {
    /// The intent it was for.
    pub intent: String,
    /// Its steps, in words.
    pub path: Vec<String>,
    /// Its reported latencies summed.
    pub execution_time_ms: u64,
}

/// A past session that failed.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct FailedCase {
    /// The intent it was for.
    pub intent: String,
    /// The step that failed, from 1.
    pub failed_step: usize,
    /// What failed.
    pub reason: String,
}

/// Past sessions of alike intents.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct HistoricalCases {
    /// Up to five sessions that worked.
    pub successful: Vec<SuccessfulCase>,
    /// Up to five that did not.
    pub failed: Vec<FailedCase>,
}

/// The context, structured.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct RagContext {
    /// The pages that match the query best.
    pub relevant_pages: Vec<RelevantPage>,
    /// The main path and its alternatives.
    pub recommended_paths: Vec<RecommendedPath>,
    /// Past sessions of alike intents.
    pub historical_cases: HistoricalCases,
    /// Advice for the model, in words.
    pub tips: Vec<String>,
}

/// An action the context suggests.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct SuggestedAction {
    /// click, input, back, …
    pub action_type: String,
    /// The widget's text.
    pub widget_text: String,
    /// How sure it is.
    pub confidence: f64,
    /// Why it is suggested.
    pub reason: String,
}

/// `get_rag_context`'s answer.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct RagContextResponse {
    /// The context as a prompt for an LLM.
    pub prompt: String,
    /// The context, structured.
    pub context: RagContext,
    /// The main path's first step, when there is one.
    pub suggested_actions: Vec<SuggestedAction>,
}
