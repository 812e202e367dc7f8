//! Learning from what agents report (seed 000 §2.1, §2.3, §4.1): a step and what it did, how a
//! session ended, intents registered, transitions added in bulk.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// The action of a reported step, as seed 000 §2.1 describes it.
#[derive(Debug, Clone, Default, Serialize, Deserialize, JsonSchema)]
pub struct ReportedAction {
    /// click, input, swipe, back, ...
    #[serde(rename = "type")]
    pub action_type: String,
    /// Widget id, if known.
    #[serde(default)]
    pub widget: Option<String>,
    /// The widget's text or label.
    #[serde(default)]
    pub widget_text: Option<String>,
    /// The widget's XPath, when the agent has one.
    #[serde(default)]
    pub widget_xpath: Option<String>,
    /// Text typed (input actions only).
    #[serde(default)]
    pub input_text: Option<String>,
    /// Beyond the seed: the state the tapped widget showed before the step, when it has one (a
    /// switch, a box, a choice): a way replays its step only where the screen shows the same,
    /// since the same tap on the other state undoes what the way did.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub checked: Option<bool>,
}

/// Seed 000 §2.1 `report_transition`: one step an agent took, from a page by an action to a page,
/// and whether it worked.
#[derive(Debug, Clone, Default, Serialize, Deserialize, JsonSchema)]
pub struct ReportTransitionRequest {
    /// The page the step started on (its id).
    pub from_page: String,
    /// The action taken.
    pub action: ReportedAction,
    /// The page the step led to (its id).
    pub to_page: String,
    /// Whether the call succeeded.
    pub success: bool,
    /// How long the action took, in milliseconds.
    #[serde(default)]
    #[schemars(range(min = 0, max = 3_600_000))]
    pub latency_ms: Option<i64>,
    /// Why the action failed, if it did.
    #[serde(default)]
    pub reason: Option<String>,
    /// Beyond the seed: with `session_id` and `intent`, the session's steps become a remembered
    /// trace for that intent.
    #[serde(default)]
    pub app_id: Option<String>,
    /// The intent the session pursued.
    #[serde(default)]
    pub intent: Option<String>,
    /// The agent's session, which ties its steps into one trace.
    #[serde(default)]
    pub session_id: Option<String>,
    /// Beyond the seed: the version of the app the step was taken in; the transition and its
    /// pages are marked seen in it.
    #[serde(default)]
    pub app_version: Option<String>,
}

/// A transition's statistics after a report.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct TransitionStats {
    /// How often the action led there.
    pub success_count: u64,
    /// How often it failed.
    pub fail_count: u64,
    /// Its success rate, 0..1.
    pub success_rate: f64,
    /// Its mean latency in milliseconds.
    pub avg_latency_ms: f64,
}

/// What `report_transition` answers: the transition the step counted on and its statistics now.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct ReportTransitionResponse {
    /// Whether the report was recorded (durably).
    pub success: bool,
    /// The transition's id.
    pub transition_id: String,
    /// Whether the transition existed before the report.
    pub updated: bool,
    /// The transition's statistics now.
    pub stats: TransitionStats,
}

/// Beyond the seed: how an agent's session for an intent ended. Only sessions not said to have
/// failed are replayed as task memory, so an agent that gave up is not copied by the next one.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct EndSessionRequest {
    /// The app (its package or bundle name).
    pub app_id: String,
    /// The agent's session, which ties its steps into one trace.
    pub session_id: String,
    /// The intent the session pursued.
    pub intent: String,
    /// Whether the agent finished the task (`false`: it gave up, ran out of steps, was stopped).
    pub finished: bool,
    /// Beyond the seed: the agent's finish message (its model's `finish(message=…)`), which an
    /// agent the session is replayed to finishes with.
    #[serde(default)]
    pub message: Option<String>,
}

/// What `end_session` answers.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct EndSessionResponse {
    /// Whether the call succeeded.
    pub success: bool,
    /// Whether a remembered session was marked: `false` when the session reported no steps for
    /// the intent.
    pub updated: bool,
    /// The steps the session reported.
    pub steps: usize,
}

/// Beyond the seed: what someone other than a session's agent judged of it — a test runner by
/// its expectations, an evaluation by its judge, a person. A verdict outranks the agent's word:
/// a session it passed confirms the way it went; one it failed confirms nothing, and each
/// remembered way the session replayed is doubted from where the session left the passing
/// runs' steps (else at its finish). It may come before or after `end_session`.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct ReportVerdictRequest {
    /// The app (its package or bundle name).
    pub app_id: String,
    /// The agent's session.
    pub session_id: String,
    /// The intent the session pursued.
    pub intent: String,
    /// Whether the session did what it was for, as the app's state showed it.
    pub passed: bool,
    /// Why, in the judge's words (a failed expectation, the screen it ended on).
    #[serde(default)]
    pub reason: Option<String>,
    /// Who judged (`atlas test run`, a person's name…).
    #[serde(default)]
    pub judge: Option<String>,
}

/// What `report_verdict` answers.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct ReportVerdictResponse {
    /// Whether the call succeeded.
    pub success: bool,
    /// Whether a remembered session was judged: `false` when the session reported no steps for
    /// the intent (nothing was written).
    pub updated: bool,
    /// The steps the session reported.
    pub steps: usize,
    /// The remembered ways the verdict doubted (a failed session that replayed them), each with
    /// the step it is doubted from.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub doubted: Vec<DoubtedWay>,
}

/// A remembered way a failed verdict doubted.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct DoubtedWay {
    /// The way's key (as `get_ways` lists it).
    pub way: String,
    /// The step it is doubted from (0 its first; its length for its finish).
    pub step: u32,
}

/// Seed 000 §2.3 `register_intent`: a task users ask of an app, and the page that completes it.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct RegisterIntentRequest {
    /// The app (its package or bundle name).
    pub app_id: String,
    /// The intent in the user's words.
    pub intent_text: String,
    /// The page that completes it (its id), when known.
    #[serde(default)]
    #[schemars(length(min = 1), extend("pattern" = atlas_model::NON_BLANK_TEXT))]
    pub target_page: Option<String>,
    /// Words that tell the intent apart (optional).
    #[serde(default)]
    #[schemars(extend("items" = { "type": "string", "minLength": 1, "pattern": atlas_model::NON_BLANK_TEXT }))]
    pub keywords: Vec<String>,
}

/// What `register_intent` answers.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct RegisterIntentResponse {
    /// Whether the call succeeded.
    pub success: bool,
    /// The intent's id.
    pub intent_id: String,
    /// What was done, in words.
    pub message: String,
}

/// One transition of a batch: an edge between two pages with counts to add.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[schemars(extend("x-checked-per-item" = true))]
pub struct BatchTransition {
    /// The page it leaves (its id).
    pub from_page: String,
    /// The page it leads to (its id).
    pub to_page: String,
    /// click, input, swipe, back…
    pub action_type: String,
    /// The widget's text or label.
    #[serde(default)]
    pub widget_text: Option<String>,
    /// The widget's id, when it has one.
    #[serde(default)]
    pub widget_id: Option<String>,
    /// Text typed (input actions only).
    #[serde(default)]
    pub input_text: Option<String>,
    /// Successes to add (default 0).
    #[serde(default)]
    pub success_count: Option<u64>,
    /// Failures to add (default 0).
    #[serde(default)]
    pub fail_count: Option<u64>,
    /// Beyond the seed: a measured latency for the edge.
    #[serde(default)]
    pub latency_ms: Option<u64>,
}

/// Seed 000 §4.1 `batch_add_transitions`: many edges at once, each checked on its own.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct BatchAddTransitionsRequest {
    /// The transitions.
    pub transitions: Vec<BatchTransition>,
}

/// What `batch_add_transitions` answers: how many items were created, updated or refused, and why.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct BatchAddTransitionsResponse {
    /// Whether the call succeeded.
    pub success: bool,
    /// Items in the batch.
    pub total: usize,
    /// New transitions.
    pub created: usize,
    /// Existing transitions whose counts grew.
    pub updated: usize,
    /// Items refused.
    pub failed: usize,
    /// Why each refused item was refused.
    pub errors: Vec<String>,
}
