//! What one screen's answer leaves for the next (`carry`), what the agent says it executed, and
//! the graph's answer as the next screen checks it: the state `observe_screen` hands back and
//! forth ([`crate::screen`]) and the checks of trust read ([`crate::trust`]).

use atlas_action::Action;
use atlas_model::{AnswerKind, Check, Widget};
use atlas_service::{NextAction, PathStep};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

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
        deserialize_with = "crate::input::object"
    )]
    pub focused: Option<Widget>,
    /// The graph's action on the screen, as it gave it.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "crate::input::object"
    )]
    pub suggested: Option<NextAction>,
    /// The graph's last action the agent took, the page it was taken on, and whether the screen
    /// has left that page since.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "crate::input::object"
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
        deserialize_with = "crate::input::object"
    )]
    pub offered: Option<Offered>,
    /// The check of the graph's step on the screen before, waiting for what is done next: a
    /// model that undoes the step (Back) says it was wrong.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "crate::input::object"
    )]
    pub unjudged: Option<Check>,
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

/// The smallest widget under a point.
pub(crate) fn widget_at(widgets: &[Widget], (x, y): (i64, i64)) -> Option<&Widget> {
    widgets
        .iter()
        .filter_map(|w| w.rect().map(|r| (w, r)))
        .filter(|(_, [l, t, r, b])| x >= *l && x < *r && y >= *t && y < *b)
        // In u128: a client's bounds may be anything an i64 holds.
        .min_by_key(|(_, [l, t, r, b])| span(*l, *r) * span(*t, *b))
        .map(|(w, _)| w)
}

/// The length from `a` to `b > a`, whatever i64s they are.
fn span(a: i64, b: i64) -> u128 {
    (i128::from(b) - i128::from(a)) as u128
}
