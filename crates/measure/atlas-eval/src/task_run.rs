//! One run of one task in `atlas eval agent`, with the conditions it runs under and what the
//! graph offered and answered on its steps.

use atlas_action::Action;
use atlas_agent::phone::Ending;
use serde::Serialize;

/// The model alone.
pub const MODEL_ONLY: &str = "model_only";
/// The model alone on the updated app.
pub const MODEL_ONLY_UPDATED: &str = "model_only_updated";
/// A task's first run after the app was updated.
pub const AFTER_UPDATE: &str = "after_update";
/// Its later runs.
pub const AFTER_UPDATE_REPEAT: &str = "after_update_repeat";

/// How many times each half's tasks are rerun after their first run.
pub const REPEAT_PASSES: usize = 3;
/// A task's first run on an app the graph has no record of yet.
pub const NEW_APP: &str = "graph_new_app";
/// A task's first run on an app the graph has a record of (the other half's tasks ran).
pub const NEW_TASK: &str = "graph_new_task";
/// A task's second run.
pub const REPEAT: &str = "graph_repeat";
/// Its later runs.
pub const REPEAT_LATER: &str = "graph_repeat_later";

/// The fleet condition's first half of an app's tasks, and its second.
pub const FLEET_FIRST_HALF: &str = "fleet_first_half";
/// See [`FLEET_FIRST_HALF`].
pub const FLEET_SECOND_HALF: &str = "fleet_second_half";

/// One run of one task.
#[derive(Debug, Clone, Serialize)]
pub struct TaskRun {
    /// The app.
    pub app: String,
    /// The task.
    pub task: String,
    /// `model_only`, `graph_new_task` or `graph_repeat`.
    pub condition: String,
    /// The run finished on the task's last screen.
    pub succeeded: bool,
    /// Steps taken.
    pub steps: usize,
    /// Calls to the model.
    pub model_calls: usize,
    /// Steps the graph took without the model.
    pub fast_path_steps: usize,
    /// Of those, steps the ground truth does otherwise.
    pub wrong_fast_path_steps: usize,
    /// Calls to the planner (counted in `model_calls` too).
    pub plan_calls: usize,
    /// Steps of routes the planner chose, taken without the screen model.
    pub plan_steps: usize,
    /// Of those, steps the ground truth does otherwise.
    pub wrong_plan_steps: usize,
    /// Steps on the recording's screens that did not do what the demonstration did there,
    /// whoever chose them: with `--mistakes`, the model's mistakes the graph did not spare it.
    pub mistaken_steps: usize,
    /// Each wrong fast-path or planned step: what was done, and what the ground truth does there.
    pub wrong: Vec<String>,
    /// Every answer the graph gave with an action, taken or not.
    pub answers: Vec<GraphAnswer>,
    /// Each step the model decided although the graph was asked: why the graph offered no
    /// action the agent could take ([`why_no_offer`]).
    pub no_offer: Vec<String>,
    /// Each step: the recorded screen it started on, who chose the action, the action, and the
    /// page the graph took the screen for.
    pub trail: Vec<String>,
    /// What the graph offered on each ground-truth step the run stood on.
    pub offers: Vec<Offer>,
    /// The agent's own time per step (the model and the device not included).
    pub agent_ms_per_step: f64,
    /// The part of it spent asking the graph.
    pub graph_ms_per_step: f64,
    /// Each step's own time, in order.
    pub agent_ms: Vec<f64>,
    /// How the run ended.
    pub ending: Ending,
    /// For a run after an update: the update's changes, by kind.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub update: Option<std::collections::BTreeMap<atlas_device_sim::update::Change, usize>>,
    /// Which of its runs in its sequence this was (0: the first; see [`AgentEval::by_run`]).
    pub run: usize,
    /// Each step the graph took without the model, judged where the recording can judge it
    /// ([`crate::judge`]).
    pub fast: Vec<FastStep>,
    /// For a run of the model alone: the recorded screen and the action of each step, which the
    /// graph's unjudged steps on the same task are compared with.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub model_steps: Option<ModelSteps>,
    /// The session the graph knows the run by, for the judge's verdict.
    #[serde(skip)]
    pub session: Option<atlas_agent::report::GraphSession>,
}

/// What the graph offered the agent on one ground-truth step.
#[derive(Debug, Clone, Serialize)]
pub struct Offer {
    /// The step's index in the task's recording.
    pub step: usize,
    /// The confidence of the action it offered, resolved on the screen; none when it offered
    /// none.
    pub confidence: Option<f64>,
    /// The offered action is the ground truth's.
    pub right: bool,
}

/// One answer of the graph and whether it was right.
#[derive(Debug, Clone, Serialize)]
pub struct GraphAnswer {
    /// Its confidence.
    pub confidence: f64,
    /// What it rested on.
    pub basis: String,
    /// None where the screen is none the task's recording has a step for (the run is off its
    /// way, after a detour): nothing says what is right there.
    pub right: Option<bool>,
}

/// One step the graph took without the model.
#[derive(Debug, Clone, Serialize)]
pub struct FastStep {
    /// The step's index in the run.
    pub step: usize,
    /// The recorded state the phone showed.
    pub screen: String,
    /// What the graph did, in its dict form.
    pub action: Option<Action>,
    /// Right or wrong by the task's recording; none where it has no step for the screen.
    pub judged: Option<bool>,
    /// For an unjudged step: whether the model alone did the same on the same screen of the
    /// same task; none where the model alone never stood on that screen.
    pub model_alone_agrees: Option<bool>,
    /// A judged wrong step the run undid within one step (the screen after the next step is
    /// the one it was taken on) or that ended the run where the task ends.
    pub undone: bool,
}

/// What the model alone did on each screen of one task, on one version of the app.
#[derive(Debug, Clone, Default, Serialize)]
pub struct ModelSteps(pub Vec<(String, Option<Action>)>);
