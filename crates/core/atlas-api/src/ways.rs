//! Remembered ways (see `atlas_model::way`): `get_ways` lists what task memory would replay for
//! an app, each way with its own record; `forget_way` forgets one, so the next finished run
//! learns it anew (a way learned from a run that went wrong, an app that changed under it).

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

pub use atlas_model::{RunOutcome, WayRun, WayTrust};

/// `get_ways`: an app's remembered ways.
#[derive(Debug, Clone, Default, Serialize, Deserialize, JsonSchema)]
pub struct GetWaysRequest {
    /// The app.
    pub app_id: String,
    /// Only the ways remembered for this task (its instruction, as agents ask it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(min = 1), extend("pattern" = atlas_model::NON_BLANK_TEXT))]
    pub intent: Option<String>,
    /// Judge the ways for this version of the app (default: none named, as an agent that
    /// reports none is answered).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub app_version: Option<String>,
}

/// One step of a remembered way.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct WayStep {
    /// The page it leaves.
    pub from_page: String,
    /// The page it led to.
    pub to_page: String,
    /// click, input, back…
    pub action_type: String,
    /// The widget's text or label.
    pub widget_text: String,
    /// The text typed, for an input.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub input_text: String,
}

/// A remembered way: its record as an answer at its first step would show it, and its steps.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct RememberedWay {
    /// Its record (`step` 0: whether its first step would be replayed, and why not).
    pub record: WayTrust,
    /// Its steps, without what its sessions did and undid.
    pub steps: Vec<WayStep>,
    /// The runs that make its record, oldest first: those that confirmed it (a verdict passed
    /// them, or their agents claimed they finished) and those a verdict failed that replayed it.
    #[serde(default)]
    pub runs: Vec<WayRun>,
}

/// `get_ways`' answer.
#[derive(Debug, Clone, Default, Serialize, Deserialize, JsonSchema)]
pub struct GetWaysResponse {
    /// The app.
    pub app_id: String,
    /// Its ways, by task, the most confirmed first.
    pub ways: Vec<RememberedWay>,
}

/// `forget_way`: a remembered way forgotten.
#[derive(Debug, Clone, Default, Serialize, Deserialize, JsonSchema)]
pub struct ForgetWayRequest {
    /// The app.
    pub app_id: String,
    /// The way's key, as `get_ways` and an answer's `trust.way.way` give it.
    pub way: String,
}

/// `forget_way`'s answer.
#[derive(Debug, Clone, Default, Serialize, Deserialize, JsonSchema)]
pub struct ForgetWayResponse {
    /// The app.
    pub app_id: String,
    /// The way forgotten.
    pub way: String,
    /// When (RFC 3339): what sessions and checks said of it before then no longer counts.
    pub forgotten_at: String,
    /// The finished runs that had confirmed it.
    pub confirmations_forgotten: u64,
}
