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

/// One step on one screen, exactly (16 hex digits): every widget as the screen showed it (texts,
/// ids, bounds and states, clocks included) and the step as `step` names it. A deterministic app
/// does the same again for the same step on the same screen, so a run that meets the same key
/// twice is going round.
pub fn screen_step(widgets: &[Widget], step: &str) -> String {
    let screen = serde_json::to_string(widgets).unwrap_or_default();
    crate::ids::hex_digest(&["step", &screen, step])
}

/// What someone other than a session's agent judged of it: passed or failed, why, and who.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Verdict {
    /// The session did what it was for (the app's state showed it).
    pub passed: bool,
    /// Why, in the judge's words (a failed expectation, the screen it ended on).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub reason: String,
    /// Who judged: a test runner, an evaluation's judge, a person.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub judge: String,
    /// When, in milliseconds since 1970 (UTC).
    pub at: i64,
}

/// How a run that went a remembered way ended, as the way's record counts it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum RunOutcome {
    /// A verdict passed it: it confirms the way, its finish included.
    Passed,
    /// Its agent said it finished, and nobody judged it: it confirms the way's steps, and its
    /// finish once a second decision (a verdict, or a model asked there) agrees.
    Claimed,
    /// A verdict failed it: it confirms nothing, and doubts the way where it left it.
    Failed,
}

/// A run in a remembered way's record: which session, how it ended, and who judged it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct WayRun {
    /// The agent's session.
    pub session_id: String,
    /// How it ended.
    pub outcome: RunOutcome,
    /// The verdict, when someone judged it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub verdict: Option<Verdict>,
    /// The app's version it ran on, when its device said.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub app_version: Option<String>,
    /// When it was last heard of (RFC 3339).
    pub at: String,
}

impl WayRun {
    /// The run `trace` as a way's record lists it.
    pub fn of(trace: &crate::Trace) -> WayRun {
        let outcome = match &trace.verdict {
            Some(v) if v.passed => RunOutcome::Passed,
            Some(_) => RunOutcome::Failed,
            None => RunOutcome::Claimed,
        };
        WayRun {
            session_id: trace.session_id.clone(),
            outcome,
            verdict: trace.verdict.clone(),
            app_version: trace.app_version.clone(),
            at: trace.updated_at.clone(),
        }
    }
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
    /// Runs that went the whole way and passed — by a verdict, or where nobody judged them, by
    /// their agents' word (`end_session`) — on any version of the app: none, and the way is
    /// offered but never replayed. A run a verdict failed confirms nothing.
    pub confirmed: u64,
    /// Of those, runs of the asked task on the version asked about: the way's own record here.
    /// None means the way is lent (from the app's earlier version, or from a sibling task).
    pub confirmed_here: u64,
    /// Of the confirming runs, those a verdict passed (`report_verdict`); the others only their
    /// agents claimed finished.
    #[serde(default)]
    pub judged: u64,
    /// A model, asked on a replay of the way where it ends, finished there too: a second
    /// decision that the task is done there, besides the claim of the run that confirmed it.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub finish_agreed: bool,
    /// Replayed steps of it that arrived where it expected (outside the runs that confirmed it,
    /// whose passes the confirmation counts).
    pub passed: u64,
    /// Replayed steps of it that did not: undone, changing nothing, or parting from it.
    pub parted: u64,
    /// The first step it is doubted at, which the fast path does not replay: one where a replay
    /// parted (that step alone), or where a run a verdict failed left the passing runs (that
    /// step and every one after it), with no run passing there since.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub doubted_from: Option<u32>,
    /// Its confidence at this step: its own record's precision (every pass of the way against
    /// the partings at this step since its last confirmation), with the app's recent record of
    /// the kind as the prior ([`crate::way_confidence`]).
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
            checked: None,
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
