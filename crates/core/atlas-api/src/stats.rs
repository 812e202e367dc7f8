//! What the graph holds (seed 000 §3.2, §4.2): intents like a query, and the graph's counts.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// Seed 000 §3.2 `find_similar_intents`: registered intents like a query.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct SimilarIntentsRequest {
    /// The intent to look for, in the user's words.
    pub query: String,
    /// Search only this app (default: every app).
    #[serde(default)]
    pub app_id: Option<String>,
    /// How many results (default 5, at most 100).
    #[serde(default)]
    #[schemars(range(min = 1, max = 100))]
    pub top_k: Option<i64>,
}

/// A registered intent like the query, with how alike.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct SimilarIntent {
    /// The intent's id.
    pub intent_id: String,
    /// The intent in the user's words.
    pub intent_text: String,
    /// The app it belongs to.
    pub app_id: String,
    /// The page that completes it (its id), when known.
    pub target_page: Option<String>,
    /// How alike, 0..1.
    pub similarity: f64,
    /// Words that tell it apart.
    pub keywords: Vec<String>,
}

/// What `find_similar_intents` answers, most alike first.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct SimilarIntentsResponse {
    /// The intents registered.
    pub intents: Vec<SimilarIntent>,
    /// How many intents were found.
    pub total_found: usize,
}

/// Seed 000 §4.2 `get_graph_stats`: the graph's size, whole or for one app.
#[derive(Debug, Clone, Default, Serialize, Deserialize, JsonSchema)]
pub struct GraphStatsRequest {
    /// Statistics of one app only.
    #[serde(default)]
    pub app_id: Option<String>,
}

/// One app's part of the graph.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct AppStats {
    /// The app (its package or bundle name).
    pub app_id: String,
    /// Its pages.
    pub pages: usize,
    /// Its transitions.
    pub transitions: usize,
    /// Its registered intents.
    pub intents: usize,
    /// Remembered traces.
    pub traces: usize,
    /// Steps reported on the app's transitions, successful and failed (beyond the seed).
    #[serde(default)]
    pub reports: u64,
    /// Of those, the ones this server learned of in the last hour, since it started (beyond the
    /// seed; see the viewer).
    #[serde(default)]
    pub reports_last_hour: u64,
    /// The mean length in steps of remembered traces.
    pub avg_path_length: f64,
    /// The mean success rate of transitions.
    pub avg_success_rate: f64,
    /// When the graph last changed (RFC 3339).
    pub last_updated: String,
    /// Beyond the seed: the app's record of trust, per version its devices reported (`null`:
    /// none reported) and kind of answer, the versions in name order.
    #[serde(default)]
    pub trust: Vec<VersionTrust>,
}

/// An app's record of trust in one kind of answer on one version.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct VersionTrust {
    /// The version, as devices reported it; none when they did not.
    pub version: Option<String>,
    /// The record.
    #[serde(flatten)]
    pub trust: atlas_model::Trust,
}

/// What `get_graph_stats` answers.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct GraphStatsResponse {
    /// Apps in the graph.
    pub apps: usize,
    /// Pages of every app.
    pub pages: usize,
    /// Transitions of every app.
    pub transitions: usize,
    /// Registered intents of every app.
    pub intents: usize,
    /// The mean length in steps of remembered traces.
    pub avg_path_length: f64,
    /// The mean success rate of transitions.
    pub avg_success_rate: f64,
    /// When the graph last changed (RFC 3339).
    pub last_updated: String,
    /// Beyond the seed: the same figures per app.
    pub by_app: Vec<AppStats>,
}
