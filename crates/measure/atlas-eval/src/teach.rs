//! What a recording teaches: each step sent through the tool interfaces a live agent uses, so an
//! import or an evaluation can learn nothing an agent could not have told Atlas.

use atlas_api::learning::{RegisterIntentRequest, ReportTransitionRequest, ReportedAction};
use atlas_api::pages::{AddPageRequest, MatchPageRequest, UiHierarchy};
use atlas_api::tools;
use atlas_client::{CallError, GraphClient, ToolCaller};
use atlas_import::recording::{RecordedAction, RecordedStep, Recording};
use atlas_model::{Widget, screen_page_name};

/// The page a screen is: `match_current_page` on its widgets, and when nothing matches (and
/// `add` allows), a new page named as `observe_screen` names one.
pub fn page_for_screen(
    caller: &dyn ToolCaller,
    app_id: &str,
    title: &str,
    widgets: &[Widget],
    add: bool,
) -> Result<Option<String>, CallError> {
    let client = GraphClient::new(caller);
    let ui = UiHierarchy {
        widgets: widgets.to_vec(),
        ..Default::default()
    };
    let matched = client.match_current_page(&MatchPageRequest {
        app_id: app_id.to_string(),
        ui_hierarchy: Some(ui.clone()),
        page_title: None,
        page_screenshot: None,
    });
    match matched {
        Ok(m) if m.matched => return Ok(m.page.map(|p| p.page_id)),
        Ok(_) => {}
        // A new app has no pages yet: that is "nothing matches", not a failure.
        Err(e) if e.code == "NOT_FOUND" || e.code == "PAGE_NOT_FOUND" => {}
        Err(e) => return Err(e),
    }
    if !add {
        return Ok(None);
    }
    let added = client.add_page(&AddPageRequest {
        app_id: app_id.to_string(),
        page_name: screen_page_name(title, widgets),
        ui_hierarchy: Some(ui),
        ..Default::default()
    })?;
    Ok(Some(added.page_id))
}

/// The action of a step as `report_transition` takes it: the widget by its label (its id only
/// when it has none, since ids such as list indices shift as lists change), and the text typed.
pub fn reported_action(step: &RecordedStep) -> Option<ReportedAction> {
    let of = |kind: &str| ReportedAction {
        action_type: kind.to_string(),
        ..ReportedAction::default()
    };
    match &step.action {
        RecordedAction::Back => return Some(of("back")),
        RecordedAction::TapView(id) => {
            return Some(ReportedAction {
                widget: Some(id.clone()),
                ..of("click")
            });
        }
        _ => {}
    }
    let widget = step.widget()?;
    let typed = match &step.action {
        RecordedAction::Input(_, text) => Some(text.clone()),
        _ => None,
    };
    Some(action_on(&widget.text, &widget.id, typed))
}

/// A tap (or, with `typed`, an input) on a widget as `report_transition` takes it: by its label,
/// by its id only when it has none, since ids such as list indices shift as lists change.
pub fn action_on(label: &str, id: &str, typed: Option<String>) -> ReportedAction {
    let label = label.trim();
    ReportedAction {
        action_type: if typed.is_some() { "input" } else { "click" }.to_string(),
        widget: label.is_empty().then(|| id.to_string()),
        widget_text: (!label.is_empty()).then(|| label.to_string()),
        input_text: typed,
        ..ReportedAction::default()
    }
}

/// Reports one step that led from `from` to `to`.
pub fn report_step(
    caller: &dyn ToolCaller,
    app_id: &str,
    from: &str,
    step: &RecordedStep,
    to: &str,
    session: &str,
    intent: Option<&str>,
) -> Result<(), CallError> {
    let Some(action) = reported_action(step) else {
        return Ok(());
    };
    let report = ReportTransitionRequest {
        from_page: from.to_string(),
        action,
        to_page: to.to_string(),
        success: true,
        latency_ms: None,
        reason: None,
        app_id: Some(app_id.to_string()),
        intent: intent.map(str::to_string),
        session_id: Some(session.to_string()),
        ..Default::default()
    };
    GraphClient::new(caller)
        .report_transition(&report)
        .map(|_| ())
}

/// What teaching a recording added.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Taught {
    /// Screens taken for a page.
    pub screens: usize,
    /// Steps reported.
    pub steps: usize,
    /// Intents registered.
    pub intents: usize,
    /// The page each screen of the recording was taken for, in order.
    pub pages: Vec<String>,
}

/// Teaches a recording: every screen becomes a page, every step a reported transition in one
/// session, and a finished task its intent with the final page as target. A step an agent could
/// not repeat (an app launch) breaks the chain: nothing is reported across it.
pub fn teach_recording(
    caller: &dyn ToolCaller,
    app_id: &str,
    recording: &Recording,
    session: &str,
) -> Result<Taught, CallError> {
    let mut taught = Taught::default();
    for step in &recording.steps {
        let page =
            page_for_screen(caller, app_id, &step.title, &step.widgets, true)?.unwrap_or_default();
        taught.pages.push(page);
        taught.screens += 1;
    }
    let intent = recording.task.as_deref();
    for (i, step) in recording.steps.iter().enumerate() {
        if let Some(next) = taught.pages.get(i + 1)
            && reported_action(step).is_some()
        {
            report_step(
                caller,
                app_id,
                &taught.pages[i],
                step,
                next,
                session,
                intent,
            )?;
            taught.steps += 1;
        }
    }
    if let (Some(intent), Some(last), Some(final_step)) =
        (intent, taught.pages.last(), recording.steps.last())
        && final_step.action == RecordedAction::Finish
    {
        let intent = RegisterIntentRequest {
            app_id: app_id.to_string(),
            intent_text: intent.to_string(),
            target_page: Some(last.clone()),
            keywords: Vec::new(),
        };
        atlas_api::ask::<tools::RegisterIntent>(caller, &intent)?;
        taught.intents += 1;
    }
    Ok(taught)
}
