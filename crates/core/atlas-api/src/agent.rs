//! What a phone agent's loop in any language calls besides `observe_screen`: its model's reply
//! read (`parse_agent_reply`), and the guard's rules before an action runs (`review_action`) and
//! after (`record_outcome`), with what the guard remembers of the run sent back and forth.

use std::collections::{BTreeMap, BTreeSet};

use atlas_action::Action;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// A phone model's reply to read.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct ParseReplyRequest {
    /// The model's reply, whole.
    pub reply: String,
}

/// The action, as `atlas agent parse` prints it, or why there is none: a reply without an
/// action is an answer to tell the model, not a bad request.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct ParseReplyResponse {
    /// `{"_metadata": "do", "action": "Tap", "element": [500, 300]}` or
    /// `{"_metadata": "finish", "message": "…"}`, argument names as in the grammar; `null` when
    /// nothing in the reply is well-formed.
    pub action: Option<Action>,
    /// Why nothing parsed, when nothing did.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

/// What a guard remembers of a run: the values its rules set, and the actions that succeeded.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(default)]
pub struct GuardMemory {
    /// Values the rules remembered (`remember`), by name.
    pub values: BTreeMap<String, String>,
    /// The names of the actions that succeeded so far (for `done` and `not_done`); a name sent
    /// twice counts once.
    #[schemars(with = "Vec<String>")]
    pub done: BTreeSet<String>,
}

/// What the rules are to apply to: the run's task, its rules and what its guard remembers.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct GuardedRun {
    /// The run's task, in the user's words: it decides which rule sets apply.
    pub task: String,
    /// Rule files (their YAML text, as `atlas agent run --rules` reads them) in force beside the
    /// shipped QQ customer-service gate. Checked when read, beyond this schema (which cannot
    /// describe a YAML document inside a text): a text that is not a rule file is refused, naming
    /// the file and the line.
    #[serde(default)]
    pub rules: Vec<String>,
    /// The `memory` of the guard's last answer in this run; none on its first call.
    #[serde(default)]
    pub memory: Option<GuardMemory>,
}

/// An action a model proposed, to review before it runs.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct ReviewActionRequest {
    /// The run.
    #[serde(flatten)]
    pub run: GuardedRun,
    /// The proposed action in its dict form, as `parse_agent_reply` gives it.
    pub action: Action,
    /// The names of the app on the screen (its display name, its package), for rules on the app.
    #[serde(default)]
    pub app: Vec<String>,
}

/// What the guard made of a proposed action.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct ReviewActionResponse {
    /// The action to run: the proposed one, or what a rule put in its place (dict form).
    pub action: Action,
    /// A rule replaced the proposed action.
    pub changed: bool,
    /// The rules that fired, in order.
    pub fired: Vec<String>,
    /// What to tell the model next turn, when a rule says.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub observation: Option<String>,
    /// The rule sets in force for the task.
    pub active: Vec<String>,
    /// Send back with the run's next guard call.
    pub memory: GuardMemory,
}

/// An action that ran, and how it went.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct RecordOutcomeRequest {
    /// The run.
    #[serde(flatten)]
    pub run: GuardedRun,
    /// The action that ran, in its dict form.
    pub action: Action,
    /// Whether it succeeded.
    pub success: bool,
    /// What it returned (a knowledge lookup's answer, an error), for rules that quote it.
    #[serde(default)]
    pub result: String,
}

/// What the guard made of an outcome.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct RecordOutcomeResponse {
    /// What to tell the model next turn, when a rule says.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub observation: Option<String>,
    /// Send back with the run's next guard call.
    pub memory: GuardMemory,
}
