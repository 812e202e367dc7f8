//! The navigation engine's interfaces (seed 000 §1.1–1.2): `query_path`, the way from a page to
//! the page an intent names, and `get_next_action`, the one action to take now.

use atlas_model::{AnswerKind, Trust};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// `query_path`'s input.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct QueryPathRequest {
    /// App id, e.g. "com.meituan.app".
    pub app_id: String,
    /// The user's intent in natural language, e.g. "点外卖".
    pub intent: String,
    /// Current page id; the app's home page when omitted.
    #[serde(default)]
    #[schemars(length(min = 1), extend("pattern" = atlas_model::NON_BLANK_TEXT))]
    pub current_page: Option<String>,
    /// Most steps allowed (default 10).
    #[serde(default)]
    #[schemars(range(min = 1, max = 1000))]
    pub max_steps: Option<i64>,
    /// Also the way in each earlier version of the app (`history`): the plan itself is always on
    /// the current version, where what a release removed is no longer taken.
    #[serde(default)]
    pub include_history: Option<bool>,
}

/// One step of a path.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct PathStep {
    /// Its number, from 1.
    pub step: usize,
    /// The page it starts from.
    pub from_page: String,
    /// click, input, back, …
    pub action_type: String,
    /// The widget's id, when known.
    pub widget_id: String,
    /// The widget's text.
    pub widget_text: String,
    /// The widget's XPath, when known.
    pub widget_xpath: String,
    /// The text to type (input actions).
    pub input_text: String,
    /// Beyond the seed: the address a `navigate` step opens (an item of a web page's kind that
    /// an intent names, "order 7", by the page's `url_template`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub url: Option<String>,
    /// The page it should lead to.
    pub expected_page: String,
    /// That page's name.
    pub expected_page_name: String,
    /// How sure the step is: its smoothed success rate, discounted while reports are few.
    pub confidence: f64,
    /// Its reported success rate.
    pub success_rate: f64,
    /// The step in words.
    pub description: String,
}

/// A path and its estimated time.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct PathInfo {
    /// Steps of the whole path.
    pub total_steps: usize,
    /// Their reported latencies summed (800 ms for a step never measured).
    pub estimated_time_ms: u64,
    /// The steps, in order.
    pub steps: Vec<PathStep>,
}

/// Another way to the same page.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct AlternativePath {
    /// Its steps.
    pub total_steps: usize,
    /// How sure it is: its steps' confidences times the intent match.
    pub confidence: f64,
    /// Its estimated time.
    pub estimated_time_ms: u64,
    /// The steps, in order.
    pub steps: Vec<PathStep>,
    /// How it differs from the main path.
    pub reason: String,
}

/// A page, briefly.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct PageSummary {
    /// The page's id.
    pub page_id: String,
    /// Its name.
    pub page_name: String,
    /// Its type (home, list, detail, form, search, other).
    pub page_type: String,
    /// What it is for.
    pub description: String,
}

/// `query_path`'s answer.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct QueryPathResponse {
    /// Whether a path was found.
    pub success: bool,
    /// What happened, in words.
    pub message: String,
    /// How sure the path is: its steps' confidences times the intent match.
    pub confidence: f64,
    /// The main path.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub path: Option<PathInfo>,
    /// Up to two other ways, each through other pages or edges.
    pub alternatives: Vec<AlternativePath>,
    /// The page the intent named.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub target_page: Option<PageSummary>,
    /// The way in each earlier version, oldest first (only with `include_history`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub history: Option<Vec<VersionPath>>,
}

/// The way from the same page to the same target as an earlier version of the app had it.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct VersionPath {
    /// The version.
    pub version: String,
    /// Whether that version had a way at all (over the transitions seen in it).
    pub found: bool,
    /// Whether its way is not the current one: a step of it is gone now, or the current
    /// version goes another way.
    pub differs: bool,
    /// Its steps (none when not found).
    pub total_steps: usize,
    /// The steps, in order.
    pub steps: Vec<PathStep>,
    /// Those of its steps the current version no longer has, by number.
    pub gone_steps: Vec<usize>,
}

impl QueryPathResponse {
    /// No path, and why, in the seed's words.
    pub fn failure(message: impl Into<String>) -> QueryPathResponse {
        QueryPathResponse {
            success: false,
            message: message.into(),
            confidence: 0.0,
            path: None,
            alternatives: vec![],
            target_page: None,
            history: None,
        }
    }
}

/// `get_next_action`'s input.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct NextActionRequest {
    /// Current page id.
    pub current_page: String,
    /// The goal, e.g. "点外卖".
    pub intent: String,
    /// App id, checked against the page's app when given.
    #[serde(default)]
    pub app_id: Option<String>,
    /// Beyond the seed: the agent's session. Its reported steps (with the same `intent`) tell
    /// which remembered steps were already taken, so a page visited twice in one task gets the
    /// right action each time.
    #[serde(default)]
    pub session_id: Option<String>,
    /// Beyond the seed: the app's version the agent's device runs, as it reports it: the trust
    /// shown is that version's.
    #[serde(default)]
    pub app_version: Option<String>,
    /// Beyond the seed: list every candidate the labels offered with the features the model
    /// weighed (for evaluation and debugging).
    #[serde(default)]
    pub explain: bool,
}

/// An action to take.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct NextAction {
    /// click, input, back, …
    pub action_type: String,
    /// The widget's id, when known.
    pub widget_id: String,
    /// The widget's text.
    pub widget_text: String,
    /// The widget's XPath, when known.
    pub widget_xpath: String,
    /// The text to type (input actions).
    pub input_text: String,
    /// How sure the answer is.
    pub confidence: f64,
    /// The page it should lead to.
    pub expected_page: String,
    /// The action in words.
    pub description: String,
    /// For a remembered way's tap: the state the widget showed when the remembered run tapped
    /// it (a switch, a box, a choice). On a screen that shows the other state the tap would undo
    /// what the way did: it is not taken.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub checked: Option<bool>,
}

impl NextAction {
    /// The graph's action as the answer gives it.
    pub fn of(
        action: atlas_model::Action,
        expected_page: String,
        confidence: f64,
        description: String,
    ) -> NextAction {
        NextAction {
            action_type: action.action_type,
            widget_id: action.widget_id,
            widget_text: action.widget_text,
            widget_xpath: action.widget_xpath,
            input_text: action.input_text,
            confidence,
            expected_page,
            description,
            checked: None,
        }
    }
}

/// `get_next_action`'s answer.
#[derive(Debug, Clone, Default, Serialize, Deserialize, JsonSchema)]
pub struct NextActionResponse {
    /// The action, when there is one to take.
    pub action: Option<NextAction>,
    /// The intent is served where the agent is.
    pub is_complete: bool,
    /// Steps left to the intent's page, this one included, when known.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub remaining_steps: Option<usize>,
    /// Why there is no action, when there is none.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// What the answer rests on, so an agent can weigh it: `memory` (remembered sessions of the
    /// same task), `labels` (the app's widget labels read against the intent) or `path` (a
    /// registered intent's page and the planned way there).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub basis: Option<Basis>,
    /// Beyond the seed, for answers read from labels: the calibrated probability that the best
    /// candidate (the action given, or `candidates[0]` when unsure) is right, measured on apps the
    /// model was not fitted on. An agent may act on `candidates[0]` above its own threshold. For
    /// a remembered session's end (`basis` `memory`, `is_complete`), how alike the remembered
    /// task is to the asked one, as for a remembered action.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub confidence: Option<f64>,
    /// Beyond the seed, for answers read from labels: the best candidates, most likely first (all
    /// of them with their features when `explain` was asked).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub candidates: Vec<CandidateAction>,
    /// Beyond the seed, for a remembered session's end: the words its agent finished with (as
    /// `end_session` was told them), the asked task's values in place of the remembered ones.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub finish_message: Option<String>,
    /// Beyond the seed: how far this app's own record lets the graph be trusted on this kind
    /// of answer (`{kind, checked, wrong, bound}`); an agent's fast path takes the answer only
    /// when `bound` reaches its target.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub trust: Option<Trust>,
}

impl NextActionResponse {
    /// The kind of answer it is, for trust: a finish, or what its action rests on.
    pub fn kind(&self) -> Option<AnswerKind> {
        if self.action.is_none() {
            return self.is_complete.then_some(AnswerKind::Finish);
        }
        self.basis.map(|basis| match basis {
            Basis::Memory => AnswerKind::Memory,
            Basis::Labels => AnswerKind::Labels,
            Basis::Path => AnswerKind::Path,
        })
    }
}

/// A candidate answer the labels offered.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct CandidateAction {
    /// `null` for "the task is done".
    pub action: Option<NextAction>,
    /// The candidate is "the task is done".
    pub is_complete: bool,
    /// Its share of the model's probability among this step's candidates.
    pub probability: f64,
    /// The features the model weighed, by name, when `explain` was asked.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub features: Option<std::collections::BTreeMap<String, f64>>,
}

/// What an answer rests on: `memory` (remembered sessions of the same task), `labels` (the
/// app's widget labels read against the intent), `path` (a registered intent's page and the
/// planned way there).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
// Each value is told in the enum's doc: a doc comment on a variant would turn the JSON
// Schema's `enum` into a `oneOf` of constants.
#[allow(missing_docs)]
pub enum Basis {
    Memory,
    Labels,
    Path,
}

impl Basis {
    /// Its name as answers spell it.
    pub fn as_str(self) -> &'static str {
        match self {
            Basis::Memory => "memory",
            Basis::Labels => "labels",
            Basis::Path => "path",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_basis_is_named_as_answers_write_it() {
        for basis in [Basis::Memory, Basis::Labels, Basis::Path] {
            assert_eq!(serde_json::to_value(basis).unwrap(), basis.as_str());
        }
    }
}
