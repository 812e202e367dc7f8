//! Remembered ways: what task memory replays, and the record each keeps of its own.
//!
//! A way is a finished session's steps for one task on one app, without the session's detours
//! and stumbles — the unit a fleet reruns. Peers that replay remembered skills (SkillDroid,
//! MobileGPT, AppAgentX) keep their reliability per skill, not per app, and so does Atlas: a way
//! that one finished run confirmed is replayed on the next run step by step under check, and a
//! replay that parts from it marks the step where it parted.
//!
//! Key design decision: **a way's record is read off the sessions, not kept beside them.** Its
//! confirmations are the finished sessions that went it, its partings the checks replays of it
//! made ([`crate::Check::way`]); both travel with the sessions through the journal, a restart,
//! `migrate` and a PostgreSQL replica. Forgetting a way marks its key and the time in the app's
//! record ([`crate::App::forgotten_ways`]): what the sessions said of it before then stops
//! counting, and the sessions themselves stay history.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::{TraceStep, Widget};

/// A way's key: the task it is asked for and its steps' transitions (16 hex digits). A way
/// adapted to a sibling task's values is asked for another task, so it keeps a record of its
/// own.
pub fn way_key(asked: &str, steps: &[TraceStep]) -> String {
    let ids: Vec<String> = steps
        .iter()
        .map(|s| crate::transition_id(&s.from_page, &s.action, &s.to_page))
        .collect();
    let mut parts: Vec<&str> = vec!["way", asked];
    parts.extend(ids.iter().map(String::as_str));
    crate::ids::hex_digest(&parts)
}

/// What a screen shows, as a finish is matched against the screen a way ended on: its widgets'
/// texts (each run of digits `#`, as a page's face keeps them, so a clock is no change) and the
/// states of its checkable widgets, in order (16 hex digits). Two screens of one page that show
/// different things — a switch on or off, another row opened — differ here.
pub fn screen_content(widgets: &[Widget]) -> String {
    let mut parts: Vec<String> = Vec::with_capacity(widgets.len());
    for w in widgets {
        let text = crate::versions::face_text(&w.text).unwrap_or_default();
        let state = match w.checked {
            Some(true) => "1",
            Some(false) => "0",
            None => "",
        };
        if !text.is_empty() || !state.is_empty() {
            parts.push(format!("{text}\u{1f}{state}"));
        }
    }
    let mut all: Vec<&str> = vec!["screen"];
    all.extend(parts.iter().map(String::as_str));
    crate::ids::hex_digest(&all)
}

/// A remembered way's own record, as an answer that replays one shows it.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize, JsonSchema)]
pub struct WayTrust {
    /// The way's key ([`way_key`]).
    pub way: String,
    /// The task the way was remembered for (another task's, when it is adapted to the asked
    /// one's values).
    pub task: String,
    /// Which of its steps the answer is: 0 its first, `steps` its finish.
    pub step: u32,
    /// Its steps.
    pub steps: u32,
    /// Runs their agents said finished (`end_session`) that went the whole way, on any version
    /// of the app: none, and the way is offered but never replayed.
    pub confirmed: u64,
    /// Of those, runs of the asked task on the version asked about: the way's own record here.
    /// None means the way is lent (from the app's earlier version, or from a sibling task).
    pub confirmed_here: u64,
    /// Replayed steps of it that arrived where it expected (outside the runs that confirmed it,
    /// whose passes the confirmation counts).
    pub passed: u64,
    /// Replayed steps of it that did not: undone, changing nothing, or parting from it.
    pub parted: u64,
    /// The first step it is doubted from: a replay parted there and no run has passed there
    /// since. The fast path replays it only up to there.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub doubted_from: Option<u32>,
    /// Its confidence: its own record's precision, with the app's recent record of the kind as
    /// the prior ([`crate::way_confidence`]).
    pub confidence: f64,
    /// The fast path may take this step (see `held` when not).
    pub replay: bool,
    /// Why the fast path may not take this step, when it may not.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub held: Option<String>,
    /// What the screen it ended on showed ([`screen_content`]), when the run that confirmed it
    /// last said: its finish is taken only on a screen that shows the same.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ends_on: Option<String>,
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Action;

    fn step(from: &str, to: &str, widget: &str) -> TraceStep {
        TraceStep {
            from_page: from.into(),
            to_page: to.into(),
            action: Action {
                action_type: "click".into(),
                widget_text: widget.into(),
                ..Action::default()
            },
            success: true,
            latency_ms: 0,
        }
    }

    #[test]
    fn a_way_is_its_task_and_its_transitions() {
        let way = [step("a", "b", "Go"), step("b", "c", "OK")];
        assert_eq!(way_key("t", &way), way_key("t", &way.clone()));
        assert_ne!(way_key("t", &way), way_key("u", &way));
        assert_ne!(way_key("t", &way), way_key("t", &way[..1]));
        assert_ne!(
            way_key("t", &way),
            way_key("t", &[way[1].clone(), way[0].clone()])
        );
    }

    #[test]
    fn a_screen_s_content_sees_states_and_words_not_clocks() {
        let w = |text: &str, checked: Option<bool>| Widget {
            text: text.into(),
            checked,
            ..Widget::default()
        };
        let on = [w("Dark mode", Some(true)), w("12:30", None)];
        let later = [w("Dark mode", Some(true)), w("12:31", None)];
        let off = [w("Dark mode", Some(false)), w("12:30", None)];
        assert_eq!(screen_content(&on), screen_content(&later));
        assert_ne!(screen_content(&on), screen_content(&off));
        assert_ne!(
            screen_content(&on),
            screen_content(&[w("夜间模式", Some(true))])
        );
    }
}
