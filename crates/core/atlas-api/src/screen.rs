//! A phone agent's step as one interface (`observe_screen`), and how its run ends
//! (`end_session` with the run's last screen): the screen and what was executed on the last one
//! in, the screen's page and the graph's next action resolved on it out, and the `carry` one
//! screen hands the next.

use atlas_action::Action;
use atlas_model::{AnswerKind, Check, Trust, Widget};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::learning::EndSessionRequest;
use crate::navigation::{NextAction, PathStep};
use crate::pages::UiHierarchy;
use crate::plan::ScreenMap;

/// The confidence at which the graph's action is taken without the model, unless asked otherwise.
pub const DEFAULT_FAST_PATH: f64 = 0.95;

/// The most pixels a screen's side may have (a screen, not an image of a wall).
pub const MAX_SCREEN_SIDE: u32 = 100_000;

/// A screen a phone agent sees, and what it did on the last one.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct ObserveScreenRequest {
    /// The app's id in the graph (an Android package, a HarmonyOS bundle).
    pub app_id: String,
    /// The task, in the user's words: the intent the steps are reported under.
    pub task: String,
    /// The agent's run: its steps make one remembered session.
    pub session_id: String,
    /// The screen: its dump (`uiautomator dump` XML, `dumpLayout` JSON) or its widgets.
    pub ui_hierarchy: UiHierarchy,
    /// The screen's width in pixels (relative coordinates 0..999 are scaled by it).
    #[schemars(range(min = 1, max = MAX_SCREEN_SIDE))]
    pub screen_width: u32,
    /// The screen's height in pixels.
    #[schemars(range(min = 1, max = MAX_SCREEN_SIDE))]
    pub screen_height: u32,
    /// What was executed on the last screen; none on a run's first screen.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "crate::fields::object"
    )]
    pub executed: Option<Executed>,
    /// The `carry` of the last answer, unchanged; none on a run's first screen. An object; one
    /// Atlas did not give is ignored (the screen starts afresh).
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "crate::fields::carried"
    )]
    #[schemars(with = "Option<serde_json::Map<String, Value>>")]
    pub carry: Option<Carry>,
    /// Take the graph's action without the model at or above this confidence (default 0.95).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 0.0, max = 2.0))]
    pub fast_path: Option<f64>,
    /// Where the graph is not sure of this screen (and no route is being walked), answer the
    /// map around it for a planning model (`map`).
    #[serde(default)]
    pub map: bool,
    /// The steps of a route a planner chose (from the last answer's `map`) still to take after
    /// the one executed on the last screen: walked one a screen while each screen is the page
    /// its step starts from.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schemars(length(max = 8))]
    pub follow: Vec<PathStep>,
    /// The app's version the device runs (adb's `dumpsys package` versionName, HarmonyOS's
    /// `bm dump`), when it reports one: trust is kept per version.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub app_version: Option<String>,
    /// Replay remembered ways on the fast path (default true). False keeps every remembered
    /// step for the model to decide (still offered in `hint` and checked): for a test that
    /// measures the model, or an agent that wants its model to lead.
    #[serde(default = "yes", skip_serializing_if = "is_yes")]
    pub replay: bool,
}

fn yes() -> bool {
    true
}

fn is_yes(b: &bool) -> bool {
    *b
}

/// `end_session` as an agent's loop calls it: how the run ended, and what its last screen left,
/// so the graph's answer there is checked against the run's last action (a finish, mostly).
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct EndRunRequest {
    /// How the session ended.
    #[serde(flatten)]
    pub session: EndSessionRequest,
    /// The `carry` of the run's last `observe_screen` answer, unchanged. An object; one Atlas did
    /// not give is ignored (nothing is checked).
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "crate::fields::carried"
    )]
    #[schemars(with = "Option<serde_json::Map<String, Value>>")]
    pub carry: Option<Carry>,
    /// What was executed on the run's last screen.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "crate::fields::object"
    )]
    pub executed: Option<Executed>,
    /// The app's version the device runs, as `observe_screen` was told it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub app_version: Option<String>,
}

/// The screen's page and the graph's next action on it.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct ObserveScreenResponse {
    /// The page the screen was taken for (matched, or added as new); empty when none.
    pub page_id: String,
    /// The graph's next action resolved on this screen, in its dict form; `null` when it has
    /// none or it names no single widget here.
    pub action: Option<Action>,
    /// For typing: the point (in pixels) to tap first, the field the text goes to.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub focus: Option<[u32; 2]>,
    /// The graph's calibrated confidence (0 when an action just taken here changed nothing).
    pub confidence: f64,
    /// `action` is there and `confidence` reaches the fast path: take it without the model.
    pub sure: bool,
    /// What the answer rests on (`memory`, `labels`, `path`, `plan`: the next step of the route
    /// being walked, to take without the model), or why there is none.
    pub basis: String,
    /// For the model, when it is asked: `{"suggested": …, "confidence": …}`.
    pub hint: Value,
    /// The step reported for `executed`, when one was.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reported: Option<ReportedStep>,
    /// The screen is not the page the route being walked expected: the rest of the route was
    /// dropped.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub deviated: bool,
    /// With `map`, where the graph is not sure: the routes from here for a planner; none when
    /// the graph knows no route whose words are like the task's.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub map: Option<ScreenMap>,
    /// How far the graph may be trusted on the answer given: the app's own record of that kind
    /// (`{kind, checked, wrong, bound}`, its `recent` checks and whether their breaker
    /// `tripped`), and for a step of a remembered way the way's own record (`way`), which
    /// `sure` goes by.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub trust: Option<Trust>,
    /// The graph's earlier answers this screen checked, now part of the app's record.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub checked: Vec<Check>,
    /// Send back with the next screen.
    pub carry: Carry,
}

/// A step reported to the graph.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct ReportedStep {
    /// Where it started.
    pub from_page: String,
    /// Where it led.
    pub to_page: String,
    /// False when the screen stayed exactly as it was.
    pub success: bool,
}

/// An action executed on the last screen.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct Executed {
    /// The action in its dict form, as `parse_agent_reply` gives it:
    /// `{"_metadata": "do", "action": "Tap", "element": [500, 300]}`.
    pub action: Action,
    /// The point (in pixels) tapped first to focus a field before typing, when the graph's
    /// answer asked for it (`focus`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub focus: Option<[u32; 2]>,
    /// Whether it was the graph's action (`action` of the last answer, taken as it was).
    #[serde(default)]
    pub by_graph: bool,
}

/// What one screen leaves for the next: send it back with the next screen as it came.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(default)]
pub struct Carry {
    /// The page the screen was taken for (empty when none).
    pub page_id: String,
    /// The screen's widgets, to tell what a tap on it hit and whether the next screen changed.
    pub widgets: Vec<Widget>,
    /// The text field typing goes to.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "crate::fields::object"
    )]
    pub focused: Option<Widget>,
    /// The graph's action on the screen, as it gave it.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "crate::fields::object"
    )]
    pub suggested: Option<NextAction>,
    /// The graph's last action the agent took, the page it was taken on, and whether the screen
    /// has left that page since.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "crate::fields::object"
    )]
    pub taken: Option<Taken>,
    /// Some step of the run has been reported.
    pub reported: bool,
    /// Every step so far is one the graph could replay (none was a knowledge lookup, a swipe,
    /// typing into no known field): a finished run is then remembered as the task's way. Say
    /// `finished` to `end_session` only when this holds.
    pub replayable: bool,
    /// The steps of the route being walked, still to take.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub plan: Vec<PathStep>,
    /// The graph's answer on the screen, sure enough for the fast path, for the next screen to
    /// check (whether or not it was taken).
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "crate::fields::object"
    )]
    pub offered: Option<Offered>,
    /// The check of the graph's step on the screen before, waiting for what is done next: a
    /// model that undoes the step (Back) says it was wrong.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "crate::fields::object"
    )]
    pub unjudged: Option<Check>,
    /// Every step the run took so far, each with the exact screen it was taken on: the fast path
    /// never takes a step again on a screen where the run took it before.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub steps_taken: Vec<StepTaken>,
}

/// A step a run took, as [`Carry::steps_taken`] keeps it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct StepTaken {
    /// The step with the exact screen it was taken on, as one digest (16 hex digits).
    pub on_screen: String,
    /// The remembered way it was a step of (its key), when the graph took it so; empty else.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub way: String,
    /// Which step of that way.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub step: u32,
    /// Whether it was a Back: what a way does after going back is no progress of its own.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub back: bool,
    /// The page it was taken on: a way's steps that never left a page did nothing but undo
    /// each other there.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub page: String,
}

fn is_zero(n: &u32) -> bool {
    *n == 0
}

/// The graph's answer on a screen, as the next screen checks it.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct Offered {
    /// What it rested on.
    pub kind: AnswerKind,
    /// The action resolved on the screen, in its dict form.
    pub action: Action,
    /// For typing: the point of the field the text goes to.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub focus: Option<[u32; 2]>,
    /// The page the action should lead to (empty when unknown).
    #[serde(default)]
    pub expected_page: String,
    /// The page it was given on.
    #[serde(default)]
    pub page: String,
    /// The screen's width and height in pixels, which the action's coordinates are relative to.
    pub screen: [u32; 2],
    /// The remembered way the answer is a step of (its key), empty when none.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub way: String,
    /// Which step of that way.
    #[serde(default)]
    pub step: u32,
    /// The answer was held back from the fast path (a doubted step, an open breaker): what the
    /// model does instead marks the way, but is no wrong answer of the graph's.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub held: bool,
}

/// A run's first screen: nothing seen yet, and nothing yet that could not be replayed.
impl Default for Carry {
    fn default() -> Carry {
        Carry {
            page_id: String::new(),
            widgets: Vec::new(),
            focused: None,
            suggested: None,
            taken: None,
            reported: false,
            replayable: true,
            plan: Vec::new(),
            offered: None,
            unjudged: None,
            steps_taken: Vec::new(),
        }
    }
}

/// The graph's action an agent took.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct Taken {
    /// The page it was taken on.
    pub page_id: String,
    /// The action as the graph gave it.
    pub action: NextAction,
    /// The screen has left that page since.
    #[serde(default)]
    pub moved: bool,
}
