//! `observe_screen`: the graph in a phone agent's loop as one interface. An agent sends each
//! screen it sees (its dump or widgets), the task, its session, and what it executed on the last
//! screen; Atlas takes the screen for a page (adding it when new), reports the last step, and
//! answers the graph's next action resolved on this screen, with its confidence and a hint for
//! the model.
//!
//! `atlas agent run` and the Open-AutoGLM plugin (`clients/python/atlas_autoglm`) both drive the
//! graph through it, so neither reads dumps, names pages, resolves widgets or decides what a step
//! taught on its own.
//!
//! With `map`, a screen where the graph is not sure also gets the map around it for a planning
//! model ([`crate::plan`]); the route the planner chose comes back as `follow`, and the screens
//! after walk it one step a screen, each checked to be the page the step starts from (a screen
//! that is not drops the rest of the route, and the agent asks its model again).
//!
//! Key design decision: **the interface keeps no state.** What one screen leaves for the next
//! (its page and widgets, the field typing goes to, the graph's last action, whether every step
//! could be replayed) comes back to the agent as [`Carry`], which it sends with the next screen
//! unchanged. Any replica can answer any step, and a restarted server loses nothing of a run.

use std::sync::Arc;

use atlas_action::Action;
use atlas_model::{
    AnswerKind, AtlasError, Point, Result, Trust, Widget, screen_page_name, validate_text,
};
use atlas_service::{
    AddPageRequest, Atlas, EndSessionResponse, MAX_ROUTE_STEPS, MatchPageRequest, NextAction,
    NextActionRequest, NextActionResponse, PathStep, ReportTransitionRequest, ReportedAction,
    UiHierarchy,
};
use serde_json::Value;

use crate::calls::{match_page, sync_call};
use crate::hit_test::widget_at;
use atlas_api::plan::{ScreenMap, ScreenRoute};
use atlas_api::screen::{
    Carry, DEFAULT_FAST_PATH, EndRunRequest, Executed, ObserveScreenRequest, ObserveScreenResponse,
    Offered, ReportedStep, Taken,
};

/// `end_session`: the graph's last answer checked (see [`EndRunRequest`]), then the session's
/// end said.
pub(crate) async fn end_session(
    atlas: Arc<Atlas>,
    req: EndRunRequest,
) -> Result<EndSessionResponse> {
    // The last answer's check is kept in the same write as the end, which checks the request
    // whole first: a refused end keeps nothing.
    let checks = match (&req.carry, &req.executed) {
        (Some(carry), Some(executed)) => {
            let offered = carry
                .offered
                .as_ref()
                .map(|o| (o, carry.widgets.as_slice()));
            crate::trust::judge(offered, carry.unjudged.clone(), executed, None, &mut None)
        }
        _ => Vec::new(),
    };
    // A finished run remembers what its last screen showed: its way's finish is taken only on
    // a screen that shows the same.
    let ends_on = req
        .carry
        .as_ref()
        .filter(|c| req.session.finished && !c.widgets.is_empty())
        .map(|c| atlas_model::screen_content(&c.widgets));
    atlas
        .end_session_checked(req.session, checks, req.app_version.as_deref(), ends_on)
        .await
}

/// What the last step did, waiting for the screen it led to.
struct Pending {
    page: String,
    action: ReportedAction,
    before: Vec<Widget>,
    /// A tap into a text field: it readies typing, and may leave the screen as it was.
    focus: bool,
}

/// `observe_screen`: see the module's documentation.
pub(crate) async fn observe_screen(
    atlas: Arc<Atlas>,
    mut req: ObserveScreenRequest,
) -> Result<ObserveScreenResponse> {
    check(&req)?;
    let size = (req.screen_width, req.screen_height);
    let fast_path = req.fast_path.unwrap_or(DEFAULT_FAST_PATH);
    let widgets = atlas_service::expand_dump(std::mem::take(&mut req.ui_hierarchy))?.widgets;
    let mut carry = req.carry.take().unwrap_or_default();
    // An empty version is no version reported.
    let app_version = req.app_version.clone().filter(|v| !v.trim().is_empty());
    // What the last screen left to check, and that screen as it was.
    let (offered, unjudged) = (carry.offered.take(), carry.unjudged.take());
    let before = offered.as_ref().map(|_| carry.widgets.clone());
    let pending = match &req.executed {
        Some(executed) if !carry.page_id.is_empty() => executed_step(&mut carry, executed, size)?,
        _ => None,
    };
    if let Some(executed) = &req.executed {
        // The graph's step of a remembered way is noted as that step: a way may do the same
        // again further on.
        let way = offered
            .as_ref()
            .filter(|o| executed.by_graph && !o.way.is_empty())
            .map(|o| (o.way.as_str(), o.step));
        crate::loops::remember(&mut carry, &executed.action, size, way);
    }
    let readied = pending.as_ref().is_some_and(|p| p.focus);
    let page = page_for_screen(&atlas, &req.app_id, &widgets).await?;
    // The graph's last action did something when the screen is another page, or shows
    // something else (a way may tap twice on one page: a second row, a counter).
    if let Some(taken) = &mut carry.taken {
        taken.moved = taken.page_id != page || carry.widgets != widgets;
    }
    let mut reported = None;
    if let Some(step) = pending.filter(|_| !page.is_empty()) {
        reported = Some(report_step(&atlas, &req, step, &page, &widgets).await?);
        carry.reported = true;
    }
    let mut checked = Vec::new();
    if let Some(executed) = &req.executed {
        let after = crate::trust::After {
            page: &page,
            widgets: &widgets,
            readied,
        };
        checked = crate::trust::judge(
            offered.as_ref().zip(before.as_deref()),
            unjudged,
            executed,
            Some(after),
            &mut carry.unjudged,
        );
    }
    if !checked.is_empty() || app_version.is_some() {
        atlas
            .record_checks(
                &req.app_id,
                &req.session_id,
                &req.task,
                app_version.as_deref(),
                checked.clone(),
            )
            .await?;
    }
    if !req.follow.is_empty() {
        carry.plan = req.follow.clone();
    }
    let (walked, deviated) = walk_plan(&mut carry, &page, &widgets, size);
    let mut answer = if let Some(step) = walked {
        step
    } else if page.is_empty() {
        Suggestion::none()
    } else {
        let asked = NextActionRequest {
            app_version: app_version.clone(),
            current_page: page.clone(),
            intent: req.task.clone(),
            app_id: Some(req.app_id.clone()),
            session_id: Some(req.session_id.clone()),
            explain: false,
        };
        match sync_call(atlas.clone(), move |a| a.get_next_action(asked)).await {
            Ok(answer) => suggest(&answer, &carry, &page, &widgets, size),
            Err(_) => Suggestion::none(),
        }
    };
    let walking = answer.basis == PLAN_BASIS;
    let confident = answer.action.is_some() && answer.confidence >= fast_path;
    // Sure enough to act on, the answer is also checked on the next screen, taken or not, so an
    // app and a way earn their record while the model is still asked; a way's step always is,
    // so a run that passes where a way is doubted lifts the doubt.
    let replays = answer.trust.as_ref().is_some_and(|t| t.way.is_some());
    let trusted = answer
        .trust
        .as_ref()
        .is_some_and(|t| trusted(t, answer.confidence, fast_path, req.replay, &widgets));
    let way_step = answer
        .trust
        .as_ref()
        .and_then(|t| t.way.as_ref())
        .map(|w| (w.way.clone(), w.step));
    let looping = answer.action.as_ref().is_some_and(|a| {
        let way = way_step.as_ref().map(|(w, k)| (w.as_str(), *k));
        crate::loops::repeats(&carry, &widgets, a, size, way)
    });
    if looping && let Some(way) = answer.trust.as_mut().and_then(|t| t.way.as_mut()) {
        way.replay = false;
        way.held = Some("the run took this step on this screen before: no loop".into());
    }
    let sure = !looping && (walking || (confident && trusted));
    if (confident || replays) && answer.action.is_some() && !walking {
        carry.offered = offered_of(&answer, size, &page, !sure);
    }
    // Where the graph reads the task as done, the model is asked whether to finish: no routes.
    let map = if req.map && !sure && !answer.done && !page.is_empty() && carry.plan.is_empty() {
        screen_map(&atlas, &req.app_id, &page, &req.task, &widgets, size).await
    } else {
        None
    };
    carry.page_id = page.clone();
    carry.widgets = widgets;
    carry.suggested = answer.raw.take();
    Ok(ObserveScreenResponse {
        page_id: page,
        sure,
        action: answer.action.clone(),
        focus: answer.focus,
        confidence: answer.confidence,
        basis: answer.basis,
        hint: answer.hint,
        reported,
        deviated,
        map,
        trust: answer.trust,
        checked,
        carry,
    })
}

/// What `observe_screen` checks of a request before anything is read or written.
fn check(req: &ObserveScreenRequest) -> Result<()> {
    validate_text("app_id", &req.app_id, true)?;
    validate_text("task", &req.task, true)?;
    validate_text("session_id", &req.session_id, true)?;
    let side = 1..=atlas_api::screen::MAX_SCREEN_SIDE;
    if !side.contains(&req.screen_width) || !side.contains(&req.screen_height) {
        return Err(AtlasError::invalid(
            "screen_width",
            format!(
                "the screen's width and height are 1 to {} pixels",
                atlas_api::screen::MAX_SCREEN_SIDE
            ),
        ));
    }
    if req.follow.len() > MAX_ROUTE_STEPS {
        return Err(AtlasError::invalid(
            "follow",
            format!("a route has at most {MAX_ROUTE_STEPS} steps"),
        ));
    }
    if let Some(version) = &req.app_version {
        validate_text("app_version", version, false)?;
    }
    Ok(())
}

/// Reports the step executed on the last screen, which led to `page`. A step after which the
/// screen is exactly as it was did nothing: reported as failed, it counts against its edge and
/// is not replayed as part of the task's way.
async fn report_step(
    atlas: &Atlas,
    req: &ObserveScreenRequest,
    step: Pending,
    page: &str,
    widgets: &[Widget],
) -> Result<ReportedStep> {
    let did_nothing = !step.focus && step.before == widgets;
    atlas
        .report_transition(ReportTransitionRequest {
            from_page: step.page.clone(),
            action: step.action,
            to_page: page.to_string(),
            success: !did_nothing,
            latency_ms: None,
            reason: did_nothing.then(|| "the screen did not change".to_string()),
            app_id: Some(req.app_id.clone()),
            intent: Some(req.task.clone()),
            session_id: Some(req.session_id.clone()),
            app_version: req.app_version.clone(),
        })
        .await?;
    Ok(ReportedStep {
        from_page: step.page,
        to_page: page.to_string(),
        success: !did_nothing,
    })
}

/// Whether the fast path may take an answer of `confidence` with this trust, on a screen of
/// `widgets`. A step of a remembered way goes by the way's own record (its `replay`), and its
/// finish only on a screen that shows what the way's last run ended on (a way whose run said
/// nothing of its last screen finishes only where the model says so). Any other answer needs
/// its confidence, shrunk toward this app's own record of its kind, to reach the fast path, the
/// app's breaker for its kind closed, its page not doubted, and an action that can be undone.
fn trusted(
    trust: &Trust,
    confidence: f64,
    fast_path: f64,
    replay: bool,
    widgets: &[Widget],
) -> bool {
    if let Some(way) = &trust.way {
        let ends_here = trust.kind != AnswerKind::Finish
            || way
                .ends_on
                .as_ref()
                .is_some_and(|shown| *shown == atlas_model::screen_content(widgets));
        return replay && way.replay && ends_here;
    }
    let own = atlas_model::Tally {
        checked: trust.checked,
        wrong: trust.wrong,
    };
    !trust.tripped
        && !trust.doubted
        && !trust.irreversible
        && atlas_model::shrunk_confidence(confidence, own) >= fast_path
}

/// The graph's answer on the screen, as the next screen checks it (when it rests on something
/// trust is kept for); `held` when the fast path did not take it.
fn offered_of(answer: &Suggestion, size: (u32, u32), page: &str, held: bool) -> Option<Offered> {
    let trust = answer.trust.as_ref()?;
    let way = trust.way.as_ref();
    answer.action.as_ref().map(|action| Offered {
        kind: trust.kind,
        action: action.clone(),
        focus: answer.focus,
        screen: [size.0, size.1],
        page: page.to_string(),
        expected_page: answer
            .raw
            .as_ref()
            .map(|r| r.expected_page.clone())
            .unwrap_or_default(),
        way: way.map(|w| w.way.clone()).unwrap_or_default(),
        step: way.map_or(0, |w| w.step),
        held,
    })
}

/// The basis of an answer that is the next step of the route being walked.
const PLAN_BASIS: &str = "plan";
/// Routes on a map, and steps in a route: at least two, since a planner's call for one step costs
/// what asking the screen model costs, and the screen model sees the screen.
const MAP_ROUTES: usize = 5;
const MAP_STEPS: std::ops::RangeInclusive<usize> = 2..=6;

/// The next step of the route being walked, resolved on this screen, when the screen is the page
/// it starts from; otherwise the rest of the route is dropped (`true`: it deviated).
fn walk_plan(
    carry: &mut Carry,
    page: &str,
    widgets: &[Widget],
    size: (u32, u32),
) -> (Option<Suggestion>, bool) {
    let Some(next) = carry.plan.first() else {
        return (None, false);
    };
    let resolved = (next.from_page == page)
        .then(|| resolve(&step_action(next), widgets, size))
        .flatten();
    let Some((action, focus)) = resolved else {
        carry.plan.clear();
        return (None, true);
    };
    let confidence = next.confidence;
    carry.plan.remove(0);
    let walked = Suggestion {
        action: Some(action),
        done: false,
        focus,
        confidence,
        hint: Value::Null,
        raw: None,
        basis: PLAN_BASIS.to_string(),
        trust: None,
    };
    (Some(walked), false)
}

/// A route's step as the graph's action.
fn step_action(step: &PathStep) -> NextAction {
    NextAction {
        action_type: step.action_type.clone(),
        widget_id: step.widget_id.clone(),
        widget_text: step.widget_text.clone(),
        widget_xpath: step.widget_xpath.clone(),
        input_text: step.input_text.clone(),
        confidence: step.confidence,
        expected_page: step.expected_page.clone(),
        description: step.description.clone(),
        checked: None,
    }
}

/// The map around the screen for a planner: the routes from its page most like the task whose
/// first step names one widget here, renumbered; `None` when there are none.
async fn screen_map(
    atlas: &Arc<Atlas>,
    app_id: &str,
    page: &str,
    task: &str,
    widgets: &[Widget],
    size: (u32, u32),
) -> Option<ScreenMap> {
    let (app, at, asked) = (app_id.to_string(), page.to_string(), task.to_string());
    let mut routes = sync_call(atlas.clone(), move |a| {
        a.map(&app, &at, &asked, MAP_ROUTES, MAP_STEPS)
    })
    .await
    .ok()?;
    let mut listed = Vec::new();
    routes.retain_mut(|route| {
        let Some((first, focus)) = route
            .steps
            .first()
            .and_then(|s| resolve(&step_action(s), widgets, size))
        else {
            return false;
        };
        route.route = listed.len() + 1;
        listed.push(ScreenRoute {
            route: route.route,
            target_page_name: route.target_page_name.clone(),
            relevance: route.relevance,
            steps: route.steps.clone(),
            first: first.clone(),
            focus,
        });
        true
    });
    if listed.is_empty() {
        return None;
    }
    let page_name = atlas
        .read(|g| g.page(page).map(|p| p.page_name.clone()))
        .unwrap_or_default();
    Some(ScreenMap {
        prompt: crate::plan::prompt(task, &page_name, &routes),
        routes: listed,
    })
}

/// The page a screen is: `match_current_page` on its widgets, and when nothing matches, a new
/// page named by its title and structural fingerprint.
async fn page_for_screen(atlas: &Arc<Atlas>, app_id: &str, widgets: &[Widget]) -> Result<String> {
    let ui = UiHierarchy {
        widgets: widgets.to_vec(),
        ..Default::default()
    };
    let matched = match_page(
        atlas.clone(),
        MatchPageRequest {
            app_id: app_id.to_string(),
            ui_hierarchy: Some(ui.clone()),
            page_title: None,
            page_screenshot: None,
        },
    )
    .await;
    match matched {
        Ok(m) if m.matched => return Ok(m.page.map(|p| p.page_id).unwrap_or_default()),
        Ok(_) => {}
        // A new app has no pages yet: that is "nothing matches", not a failure.
        Err(AtlasError::NotFound(_) | AtlasError::PageNotFound(_)) => {}
        Err(e) => return Err(e),
    }
    let title = widgets
        .iter()
        .map(|w| w.text.trim())
        .find(|t| !t.is_empty())
        .unwrap_or("screen");
    let name = screen_page_name(title, widgets);
    let added = atlas
        .add_page(AddPageRequest {
            app_id: app_id.to_string(),
            page_name: name,
            ui_hierarchy: Some(ui),
            ..Default::default()
        })
        .await?;
    Ok(added.page_id)
}

/// What the executed action on the carried screen reports, if anything; notes the field typing
/// goes to, and a step the graph could not replay.
fn executed_step(
    carry: &mut Carry,
    executed: &Executed,
    size: (u32, u32),
) -> Result<Option<Pending>> {
    let action = &executed.action;
    if executed.by_graph
        && let Some(suggested) = &carry.suggested
    {
        carry.taken = Some(Taken {
            page_id: carry.page_id.clone(),
            action: suggested.clone(),
            moved: false,
        });
    }
    let widgets = &carry.widgets;
    if let Some([x, y]) = executed.focus {
        carry.focused = widget_at(widgets, (i64::from(x), i64::from(y))).cloned();
    }
    let mut focus_tap = false;
    let reported = match action {
        Action::Back => Some(reported_action("back", None, None, None)),
        Action::Tap { element, .. } => {
            Point::from_relative(element[0].into(), element[1].into(), size.0, size.1)
                .and_then(|p| widget_at(widgets, (p.x.into(), p.y.into())))
                .map(|w| {
                    if w.is_text_field() {
                        carry.focused = Some(w.clone());
                        focus_tap = true;
                    }
                    ReportedAction {
                        checked: w.checked,
                        ..reported_action("click", Some(&w.id), Some(&w.text), None)
                    }
                })
        }
        Action::Type { text } | Action::TypeName { text } => carry
            .focused
            .as_ref()
            .map(|w| reported_action("input", Some(&w.id), Some(label(w)), Some(text))),
        _ => None,
    };
    let invisible = matches!(
        action,
        Action::Type { .. }
            | Action::TypeName { .. }
            | Action::Swipe { .. }
            | Action::LongPress { .. }
            | Action::DoubleTap { .. }
            | Action::GetKnowledgeData { .. }
    );
    if invisible && reported.is_none() {
        carry.replayable = false;
    }
    Ok(reported.map(|action| Pending {
        page: carry.page_id.clone(),
        action,
        before: widgets.clone(),
        focus: focus_tap,
    }))
}

fn reported_action(
    kind: &str,
    widget: Option<&str>,
    text: Option<&str>,
    input: Option<&str>,
) -> ReportedAction {
    ReportedAction {
        action_type: kind.to_string(),
        widget: widget.map(str::to_string),
        widget_text: text.map(str::to_string),
        widget_xpath: None,
        input_text: input.map(str::to_string),
        checked: None,
    }
}

/// What the graph's answer comes to on this screen.
struct Suggestion {
    action: Option<Action>,
    /// The graph's answer is that the task is done here (taken only when remembered).
    done: bool,
    focus: Option<[u32; 2]>,
    confidence: f64,
    hint: Value,
    raw: Option<NextAction>,
    basis: String,
    /// The app's trust in this kind of answer.
    trust: Option<Trust>,
}

impl Suggestion {
    fn none() -> Suggestion {
        Suggestion {
            action: None,
            done: false,
            focus: None,
            confidence: 0.0,
            hint: Value::Null,
            raw: None,
            basis: String::new(),
            trust: None,
        }
    }
}

/// The graph's answer resolved on the screen's widgets.
fn suggest(
    answer: &NextActionResponse,
    carry: &Carry,
    page: &str,
    widgets: &[Widget],
    size: (u32, u32),
) -> Suggestion {
    let action = answer.action.as_ref();
    // Only a confidence the graph states counts: an answer without one is never sure.
    let confidence = action
        .map(|a| a.confidence)
        .or(answer.confidence)
        .unwrap_or(0.0);
    // A finish ends the run, so no later step can undo a wrong one: the graph finishes a task,
    // or tells the model it may, only where a remembered session of it ended, never on a guess
    // from labels or a path's target page (a search page looks done before anything was found).
    let remembered = answer.basis == Some(atlas_service::Basis::Memory);
    let finish = (action.is_none() && answer.is_complete && remembered).then(|| Action::Finish {
        message: answer
            .finish_message
            .clone()
            .unwrap_or_else(|| "done (a remembered session of this task finished here)".into()),
    });
    // The model is told what the graph would do, with how sure it is; where the graph knows
    // nothing it says nothing (a confidence for "unknown" would only mislead).
    let suggested = match (action, &finish) {
        (Some(a), _) => Some(Value::String(a.description.clone())),
        (None, Some(_)) => Some(Value::from("finish")),
        (None, None) => None,
    };
    let hint = suggested.map_or(Value::Null, |suggested| {
        serde_json::json!({
            "suggested": suggested,
            "confidence": (confidence * 1000.0).round() / 1000.0,
        })
    });
    // An action that changed nothing here is not repeated without asking: the screen may need
    // something the graph does not know (a toggle's state, a field's content).
    let repeated = carry.taken.as_ref().is_some_and(|t| {
        !t.moved && t.page_id == page && action.is_some_and(|a| same_action(&t.action, a))
    });
    let confidence = if repeated { 0.0 } else { confidence };
    let finished = finish.is_some();
    // A switch the screen shows set as the way's step left it, or a choice shown made, needs no
    // tap: the same tap would undo it or change nothing, so the graph neither takes it nor offers
    // it to be checked (the model's choice there says nothing of the way: a run that came back
    // onto the way after setting it itself, an app that kept the setting).
    let done_already = action.is_some_and(|a| shows_done(a, widgets));
    let resolved = match action {
        None => finish.map(|f| (f, None)),
        Some(_) if done_already => None,
        Some(a) => resolve(a, widgets, size),
    };
    let basis = match (&answer.basis, &answer.error) {
        (Some(basis), _) => serde_json::to_value(basis)
            .ok()
            .and_then(|v| v.as_str().map(str::to_string))
            .unwrap_or_default(),
        (None, Some(error)) => error.clone(),
        (None, None) => String::new(),
    };
    let (action, focus) = resolved.map_or((None, None), |(a, f)| (Some(a), f));
    Suggestion {
        action,
        done: answer.action.is_none() && answer.is_complete,
        focus,
        confidence,
        hint,
        raw: answer.action.clone(),
        basis,
        // A finish is offered only from memory; a guessed one has no trust to show.
        trust: answer
            .trust
            .clone()
            .filter(|t| t.kind != AnswerKind::Finish || finished)
            .map(|mut trust| {
                if let Some(way) = trust.way.as_mut().filter(|_| done_already) {
                    way.replay = false;
                    way.held = Some("the screen shows what this step does done already".into());
                }
                trust
            }),
    }
}

/// Whether the screen shows what `action`'s tap did done already: the widget it names in a state
/// other than the one the remembered run found it in (a switch set, a box ticked, a choice made
/// — the same tap would undo it or change nothing), or, where no run said what it found, a radio
/// button shown chosen.
fn shows_done(action: &NextAction, widgets: &[Widget]) -> bool {
    matches!(action.action_type.as_str(), "click" | "tap")
        && Widget::named(widgets, &action.widget_id, &action.widget_text).is_some_and(|(w, _)| {
            match (action.checked, w.checked) {
                (Some(found), Some(shown)) => found != shown,
                (None, Some(true)) => w.widget_type.to_lowercase().contains("radio"),
                _ => false,
            }
        })
}

/// Whether two of the graph's actions are the same answer, however sure the graph was of each.
fn same_action(a: &NextAction, b: &NextAction) -> bool {
    a.action_type == b.action_type
        && a.widget_id == b.widget_id
        && a.widget_text == b.widget_text
        && a.widget_xpath == b.widget_xpath
        && a.input_text == b.input_text
        && a.expected_page == b.expected_page
        && a.description == b.description
}

/// What names a field: its text, else its id (a field's text is what it holds).
fn label(w: &Widget) -> &str {
    if w.text.is_empty() { &w.id } else { &w.text }
}

/// The graph's action as the grammar's, on the widget it names (by id, else by text), and the
/// point to tap first when it types.
fn resolve(
    action: &NextAction,
    widgets: &[Widget],
    size: (u32, u32),
) -> Option<(Action, Option<[u32; 2]>)> {
    let kind = action.action_type.as_str();
    if kind == "back" {
        return Some((Action::Back, None));
    }
    // The widget the action names must be one; what stays ambiguous is not guessed.
    let (_, [l, t, r, b]) = Widget::named(widgets, &action.widget_id, &action.widget_text)?;
    let middle = |a: i64, b: i64| {
        ((i128::from(a) + i128::from(b)) / 2).clamp(0, i128::from(u32::MAX)) as u32
    };
    let centre = [middle(l, r), middle(t, b)];
    let element = Point {
        x: centre[0],
        y: centre[1],
    }
    .relative(size.0, size.1);
    match kind {
        "input" => Some((
            Action::Type {
                text: action.input_text.clone(),
            },
            Some(centre),
        )),
        "long_click" | "long_press" => Some((Action::LongPress { element }, None)),
        _ => Some((
            Action::Tap {
                element,
                message: None,
            },
            None,
        )),
    }
}
