//! What a recording teaches: each step sent through the tool interfaces a live agent uses, so an
//! import or an evaluation can learn nothing an agent could not have told Atlas.

use atlas_agent::graph::page_for_screen;
use atlas_agent::{CallError, ToolCaller};
use atlas_import::recording::{RecordedAction, RecordedStep, Recording};
use serde_json::{Value, json};

/// The action of a step as `report_transition` takes it: the widget by its label (its id only
/// when it has none, since ids such as list indices shift as lists change), and the text typed.
pub fn reported_action(step: &RecordedStep) -> Option<Value> {
    match &step.action {
        RecordedAction::Back => return Some(json!({ "type": "back" })),
        RecordedAction::TapView(id) => return Some(json!({ "type": "click", "widget": id })),
        _ => {}
    }
    let widget = step.widget()?;
    let mut action = json!({ "type": if matches!(step.action, RecordedAction::Input(..)) { "input" } else { "click" } });
    if widget.text.trim().is_empty() {
        action["widget"] = json!(widget.id);
    } else {
        action["widget_text"] = json!(widget.text.trim());
    }
    if let RecordedAction::Input(_, text) = &step.action {
        action["input_text"] = json!(text);
    }
    Some(action)
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
    let mut body = json!({ "from_page": from, "to_page": to, "action": action, "success": true, "app_id": app_id, "session_id": session });
    if let Some(intent) = intent {
        body["intent"] = json!(intent);
    }
    caller.call("report_transition", body).map(|_| ())
}

/// What teaching a recording added.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Taught {
    pub screens: usize,
    pub steps: usize,
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
        caller.call(
            "register_intent",
            json!({ "app_id": app_id, "intent_text": intent, "target_page": last }),
        )?;
        taught.intents += 1;
    }
    Ok(taught)
}
