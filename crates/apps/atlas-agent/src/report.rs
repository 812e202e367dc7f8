//! What a run of the agent reports: each step (who chose it, what ran, the model's call and the
//! time each part took) and the run's totals, for people (`summary`) and as JSON.

use atlas_action::Action;
use atlas_api::learning::ReportVerdictRequest;
use serde::Serialize;
use serde_json::Value;

/// Who chose a step's action.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Chooser {
    /// The model's reply.
    Model,
    /// The graph was sure enough (the fast path): the model was not asked.
    Graph,
    /// A guard rule replaced what was proposed.
    Guard,
    /// A step of a route the planner chose over the graph's map (its first, or one walked
    /// after it without asking).
    Plan,
}

/// The model call of a step.
#[derive(Debug, Clone, Serialize)]
pub struct ModelCall {
    /// From the request to the first piece of the answer.
    pub first_token_ms: f64,
    /// From the request to the last piece.
    pub total_ms: f64,
    /// Tokens of the request, when the endpoint says.
    pub prompt_tokens: Option<u64>,
    /// Tokens of the reply, when the endpoint says.
    pub completion_tokens: Option<u64>,
    /// Calls made, retries included.
    pub attempts: u32,
}

/// One step of a run.
#[derive(Debug, Clone, Serialize)]
pub struct StepReport {
    /// The step's number, from 1.
    pub step: usize,
    /// The app in front when the step began.
    pub app: String,
    /// Who chose the action.
    pub chosen_by: Chooser,
    /// The model's reply as it came.
    pub reply: String,
    /// What the model proposed, in the seed's dict form (none when nothing parsed).
    pub proposed: Option<Action>,
    /// What ran, in the seed's dict form.
    pub action: Option<Action>,
    /// The guard rules that fired.
    pub rules: Vec<String>,
    /// Whether the action ran without an error.
    pub ok: bool,
    /// What the model is told next.
    pub observation: Option<String>,
    /// The model call, when the model was asked.
    pub model: Option<ModelCall>,
    /// The planner's call, when it was asked, and its reply.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub planner: Option<(ModelCall, String)>,
    /// The page the graph matched the screen to, and what it would have done there.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub graph: Option<Value>,
    /// The whole step.
    pub step_ms: f64,
    /// The device's share.
    pub device_ms: f64,
    /// Everything but the model and the device: the agent's own cost.
    pub agent_ms: f64,
    /// The part of `agent_ms` spent asking the graph (matching the screen, reporting the last
    /// step, the next action).
    pub graph_ms: f64,
}

/// How a run ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Ending {
    /// The model said `finish`.
    Finished,
    /// It ran out of steps.
    MaxSteps,
    /// Stopped from outside (Ctrl-C).
    Stopped,
    /// Nobody could take over when the model asked.
    TakeOver,
    /// The model or the device failed beyond retrying.
    Error,
}

/// A run, step by step, with its totals.
#[derive(Debug, Clone, Serialize)]
pub struct RunReport {
    /// The task.
    pub task: String,
    /// The device's name.
    pub device: String,
    /// The model's name.
    pub model: String,
    /// How the run ended.
    pub ending: Ending,
    /// The model's last message, or why the run stopped.
    pub message: String,
    /// The guard's rule sets in force.
    pub guard: Vec<String>,
    /// Every step.
    pub steps: Vec<StepReport>,
    /// Calls to the model, the planner's included.
    pub model_calls: usize,
    /// Of those, calls to the planner.
    pub plan_calls: usize,
    /// Tokens of every request.
    pub prompt_tokens: u64,
    /// Tokens of every reply.
    pub completion_tokens: u64,
    /// The whole run.
    pub total_ms: f64,
    /// The session the graph knows the run by, when the run was reported to one: a judge sends
    /// its verdict for it ([`GraphSession::verdict`]).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub session: Option<GraphSession>,
}

/// The app and session a graph knows a run by.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct GraphSession {
    /// The app the run's steps were reported under.
    pub app_id: String,
    /// The session.
    pub session_id: String,
}

impl GraphSession {
    /// The verdict on the run of `task`, as `report_verdict` takes it: passed or failed, why,
    /// and who judged.
    pub fn verdict(
        &self,
        task: &str,
        passed: bool,
        reason: &str,
        judge: &str,
    ) -> ReportVerdictRequest {
        ReportVerdictRequest {
            app_id: self.app_id.clone(),
            session_id: self.session_id.clone(),
            intent: task.to_string(),
            passed,
            reason: Some(reason.to_string()).filter(|r| !r.trim().is_empty()),
            judge: Some(judge.to_string()),
        }
    }
}

impl RunReport {
    /// A few lines for a person.
    pub fn summary(&self) -> String {
        let mut out = format!(
            "task: {}\nended: {:?} — {}\nsteps: {}, model calls: {}, tokens: {} in / {} out, {:.1} s\n",
            self.task,
            self.ending,
            self.message,
            self.steps.len(),
            self.model_calls,
            self.prompt_tokens,
            self.completion_tokens,
            self.total_ms / 1000.0
        );
        for s in &self.steps {
            let action = s
                .action
                .as_ref()
                .map_or("(nothing parsed)".to_string(), |a| a.to_dict().to_string());
            out += &format!(
                "{:>3}. [{:?}] {action}{}{}\n",
                s.step,
                s.chosen_by,
                if s.rules.is_empty() {
                    String::new()
                } else {
                    format!(" (guard: {})", s.rules.join("; "))
                },
                s.observation
                    .as_ref()
                    .map_or(String::new(), |o| format!("\n       → {o}")),
            );
        }
        out
    }
}
