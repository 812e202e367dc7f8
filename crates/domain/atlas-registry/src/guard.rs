//! The guard of seed 002 as two interfaces, so an agent in any language (the Open-AutoGLM plugin
//! among them) runs under the same rules as `atlas agent run`, evaluated by the same code
//! ([`atlas_guard`]): `review_action` before an action runs, `record_outcome` after.
//!
//! Key design decision: **the server keeps no guard state.** Each answer carries the guard's
//! [`atlas_api::agent::GuardMemory`]; the agent sends it back with its next call, as it does `observe_screen`'s
//! `carry`. The rules in force are the shipped QQ customer-service gate (as in `atlas agent run`)
//! and the rule files the agent sends as text: rules are data, read and checked on every call,
//! never code.

use atlas_api::agent::{
    GuardedRun, RecordOutcomeRequest, RecordOutcomeResponse, ReviewActionRequest,
    ReviewActionResponse,
};
use atlas_guard::MAX_RULE_BYTES;
use atlas_guard::{Guard, RuleSet};
use atlas_model::{AtlasError, Result, validate_text};

/// At most this many rule files in one call.
const MAX_RULE_FILES: usize = 16;

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
        .map_err(|(i, e)| AtlasError::invalid(&format!("rules[{i}]"), e.to_string()))?;
    Ok(Guard::resume(
        sets,
        &run.task,
        run.memory.unwrap_or_default(),
    ))
}
