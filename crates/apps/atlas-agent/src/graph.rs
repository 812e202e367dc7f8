//! The graph in the agent's loop: each screen goes to `observe_screen` with what was executed on
//! the last one; Atlas takes it for a page, reports the step, and answers its next action, which
//! the agent takes without asking the model when its calibrated confidence reaches the fast-path
//! threshold. A task done once is then replayed from memory; a new task on a known app costs
//! model calls only where the graph is unsure.
//!
//! What a screen means to the graph (its page, what a tap hit, whether a step changed anything,
//! which widget an answer names) is decided by Atlas behind that one interface, the same one the
//! Open-AutoGLM plugin uses; this link only carries the run from one screen to the next.

use atlas_action::Action;
use atlas_api::learning::EndSessionRequest;
use atlas_api::navigation::PathStep;
use atlas_api::pages::UiHierarchy;
use atlas_api::plan::ScreenMap;
use atlas_api::screen::{Carry, EndRunRequest, Executed, ObserveScreenRequest};
use atlas_client::{GraphClient, ToolCaller};
use atlas_device::Point;
use atlas_model::Widget;
use serde_json::Value;

/// The agent's link to the graph for one run.
pub struct GraphLink<'a> {
    client: GraphClient<'a>,
    /// The app the graph knows the phone's app by; the current app's package when `None`.
    app_id: Option<String>,
    /// Take the graph's action without the model where Atlas says it is sure at this target
    /// (`observe_screen`'s `sure`: a remembered way's step its record lets replay, or an answer
    /// whose confidence, shrunk toward the app's own record of its kind, reaches it).
    pub fast_path: f64,
    /// The app's version the device reports, when it does: trust is kept per version.
    pub app_version: Option<String>,
    /// Replay remembered ways on the fast path (true unless switched off: a test that measures
    /// the model alone on a graph that learns).
    pub replay: bool,
    session: String,
    /// What the last answer left for the next screen.
    carry: Option<Carry>,
    /// What was executed on the last screen the graph saw, to report with the next.
    executed: Option<Executed>,
    /// The app the run's screens were sent under.
    app: Option<String>,
    /// Ask for the map around screens the graph is not sure of (the agent has a planner).
    pub want_map: bool,
    /// The rest of a route the planner chose, to send with the next screen.
    follow: Vec<PathStep>,
    /// A screen the graph did not take (a step into another app, a refused hierarchy): the
    /// step that led there was never reported, so the run, finished or not, is not one to
    /// replay.
    lost_sight: bool,
}

/// What the graph says about the next step.
pub struct Suggestion {
    /// The action, resolved on the screen, and the point to tap first (a field to type into).
    pub action: Option<(Action, Option<Point>)>,
    /// The graph's calibrated confidence in it.
    pub confidence: f64,
    /// The graph is sure enough to act without the model (`observe_screen`'s `sure`: see
    /// [`GraphLink::fast_path`]), or the step is a planned route's.
    pub sure: bool,
    /// The app's record of trust in this kind of answer, as the graph showed it.
    pub trust: Option<atlas_model::Trust>,
    /// Context for the model when it is asked after all.
    pub hint: Value,
    /// The graph's action as it gave it.
    pub raw: Value,
    /// What the answer rests on (`memory`, `labels`, `path`, `plan`), or why there is none.
    pub basis: String,
    /// The action is the next step of the route being walked: take it without the model.
    pub walking: bool,
    /// The screen was not the page the route being walked expected: the route was dropped.
    pub deviated: bool,
    /// With [`GraphLink::want_map`], where the graph is not sure: the routes for a planner.
    pub map: Option<ScreenMap>,
}

impl<'a> GraphLink<'a> {
    /// A run's link through `caller`, under `session`.
    pub fn new(
        caller: &'a dyn ToolCaller,
        app_id: Option<String>,
        fast_path: f64,
        session: &str,
    ) -> GraphLink<'a> {
        GraphLink {
            client: GraphClient::new(caller),
            app_id,
            fast_path,
            app_version: None,
            replay: true,
            session: session.to_string(),
            carry: None,
            executed: None,
            app: None,
            want_map: false,
            follow: Vec::new(),
            lost_sight: false,
        }
    }

    /// Walks the rest of a route the planner chose (its steps after the one taken on this
    /// screen) on the next screens.
    pub fn follow(&mut self, steps: Vec<PathStep>) {
        self.follow = steps;
    }

    /// The app a screen of `package` is sent under (and whose version it is reported with). As
    /// Android keeps another app's screen that an
    /// app opens (a permission dialog, a file picker, the dialer) in the opening app's task, a
    /// screen reached by a step taken in the run's app stays that app's; only a Launch or the
    /// Home key leaves it. So a task that passes through another app's screen is one session of
    /// one app, reported whole and replayable.
    pub fn app(&self, package: &str) -> String {
        if let Some(fixed) = &self.app_id {
            return fixed.clone();
        }
        match (&self.app, &self.executed) {
            (Some(current), Some(step))
                if !matches!(step.action, Action::Launch { .. } | Action::Home) =>
            {
                current.clone()
            }
            _ => package.to_string(),
        }
    }

    /// Sends the screen (with the step that led here): its page, empty when none, and what the
    /// graph would do on it.
    pub fn observe(
        &mut self,
        package: &str,
        widgets: &[Widget],
        task: &str,
        (width, height): (u32, u32),
    ) -> Result<(String, Suggestion), crate::CallError> {
        let app = self.app(package);
        let request = ObserveScreenRequest {
            app_id: app.clone(),
            task: task.to_string(),
            session_id: self.session.clone(),
            ui_hierarchy: UiHierarchy {
                widgets: widgets.to_vec(),
                ..Default::default()
            },
            screen_width: width,
            screen_height: height,
            executed: self.executed.clone(),
            carry: self.carry.clone(),
            // Past 1 nothing is sure; the schema takes at most 2.
            fast_path: Some(self.fast_path.clamp(0.0, 2.0)),
            map: self.want_map,
            follow: std::mem::take(&mut self.follow),
            app_version: self.app_version.clone(),
            replay: self.replay,
        };
        let answer = match self.client.observe_screen(&request) {
            Ok(answer) => answer,
            Err(e) => {
                // What ran on the last screen is lost with it; the next screen starts afresh.
                self.lost_sight = true;
                self.executed = None;
                self.carry = None;
                return Err(e);
            }
        };
        self.app = Some(app);
        self.executed = None;
        let raw = serde_json::to_value(&answer.carry.suggested).unwrap_or(Value::Null);
        self.carry = Some(answer.carry);
        let action = answer
            .action
            .map(|a| (a, answer.focus.map(|[x, y]| Point { x, y })));
        let suggestion = Suggestion {
            action,
            confidence: answer.confidence,
            sure: answer.sure,
            trust: answer.trust,
            hint: answer.hint,
            raw,
            walking: answer.sure && answer.basis == "plan",
            basis: answer.basis,
            deviated: answer.deviated,
            map: answer.map,
        };
        Ok((answer.page_id, suggestion))
    }

    /// Says how the run ended (`finished` with its message, or not), so that only a finished task
    /// is replayed to the next agent (and only one whose every step the graph saw — none after a
    /// screen it did not take), ending with the same message.
    pub fn end(&self, task: &str, finished: Option<&str>) -> Result<(), crate::CallError> {
        let Some(app) = &self.app else {
            return Ok(());
        };
        // A run that lost sight of a screen reported steps before; it is told unfinished, since
        // a session nobody ends counts as one that went well.
        let reported = self.lost_sight || self.carry.as_ref().is_some_and(|c| c.reported);
        if !reported {
            return Ok(());
        }
        let replayable = !self.lost_sight && self.carry.as_ref().is_some_and(|c| c.replayable);
        let ended = EndRunRequest {
            session: EndSessionRequest {
                app_id: app.clone(),
                session_id: self.session.clone(),
                intent: task.to_string(),
                finished: finished.is_some() && replayable,
                message: finished.map(str::to_string),
            },
            // The last screen's answer is checked against what was done there.
            carry: self.carry.clone(),
            executed: self.executed.clone(),
            app_version: self.app_version.clone(),
        };
        self.client.end_session(&ended).map(|_| ())
    }

    /// The app and session the graph knows the run by, once a screen of it was sent.
    pub fn session(&self) -> Option<crate::report::GraphSession> {
        self.app.as_ref().map(|app| crate::report::GraphSession {
            app_id: app.clone(),
            session_id: self.session.clone(),
        })
    }

    /// Remembers what ran on the screen the graph last saw (after a tap on `focus`, when the
    /// graph typed into a field; `by_graph` when it was the graph's own action), to report it
    /// with the next screen.
    pub fn executed(&mut self, action: &Action, focus: Option<Point>, by_graph: bool) {
        self.executed = Some(Executed {
            action: action.clone(),
            focus: focus.map(|p| [p.x, p.y]),
            by_graph,
        });
    }
}
