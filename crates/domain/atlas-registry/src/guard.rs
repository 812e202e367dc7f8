//! The guard of seed 002 as two interfaces, so an agent in any language (the Open-AutoGLM plugin
//! among them) runs under the same rules as `atlas agent run`, evaluated by the same code
//! ([`atlas_guard`]): `review_action` before an action runs, `record_outcome` after.
//!
//! Key design decision: **the server keeps no guard state.** Each answer carries the guard's
//! [`GuardMemory`]; the agent sends it back with its next call, as it does `observe_screen`'s
//! `carry`. The rules in force are the shipped QQ customer-service gate (as in `atlas agent run`)
//! and the rule files the agent sends as text: rules are data, read and checked on every call,
//! never code.

use atlas_action::Action;
use atlas_guard::MAX_RULE_BYTES;
use atlas_guard::{Guard, GuardMemory, RuleSet};
use atlas_model::{AtlasError, Result, validate_text};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// At most this many rule files in one call.
const MAX_RULE_FILES: usize = 16;

/// What the rules are to apply to: the run's task, its rules and what its guard remembers.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
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
#[derive(Debug, Clone, Deserialize, JsonSchema)]
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
#[derive(Debug, Clone, Serialize, JsonSchema)]
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
#[derive(Debug, Clone, Deserialize, JsonSchema)]
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
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct RecordOutcomeResponse {
    /// What to tell the model next turn, when a rule says.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub observation: Option<String>,
    /// Send back with the run's next guard call.
    pub memory: GuardMemory,
}

/// `review_action`: see the module's documentation.
pub(crate) fn review_action(req: ReviewActionRequest) -> Result<ReviewActionResponse> {
    let mut guard = guard_of(req.run)?;
    let proposed = req.action;
    let app: Vec<&str> = req.app.iter().map(String::as_str).collect();
    let reviewed = guard.review(proposed.clone(), &app);
    Ok(ReviewActionResponse {
        changed: reviewed.action != proposed,
        action: reviewed.action,
        fired: reviewed.rules,
        observation: reviewed.observation,
        active: guard.active().into_iter().map(String::from).collect(),
        memory: guard.memory().clone(),
    })
}

/// `record_outcome`: see the module's documentation.
pub(crate) fn record_outcome(req: RecordOutcomeRequest) -> Result<RecordOutcomeResponse> {
    let mut guard = guard_of(req.run)?;
    let action = req.action;
    let observation = guard.record(&action, req.success, &req.result);
    Ok(RecordOutcomeResponse {
        observation,
        memory: guard.memory().clone(),
    })
}

/// The run's guard: the shipped gate and the sent rule files, resumed from its memory.
fn guard_of(run: GuardedRun) -> Result<Guard> {
    validate_text("task", &run.task, true)?;
    if run.rules.len() > MAX_RULE_FILES {
        return Err(AtlasError::invalid(
            "rules",
            format!(
                "at most {MAX_RULE_FILES} rule files, got {}",
                run.rules.len()
            ),
        ));
    }
    if let Some(i) = run
        .rules
        .iter()
        .position(|text| text.len() > MAX_RULE_BYTES)
    {
        return Err(AtlasError::invalid(
            &format!("rules[{i}]"),
            format!("a rule file may hold at most {MAX_RULE_BYTES} bytes"),
        ));
    }
    let sets = RuleSet::with_shipped(run.rules.iter().map(String::as_str))
        .map_err(|(i, e)| AtlasError::invalid(&format!("rules[{i}]"), e))?;
    Ok(Guard::resume(
        sets,
        &run.task,
        run.memory.unwrap_or_default(),
    ))
}
