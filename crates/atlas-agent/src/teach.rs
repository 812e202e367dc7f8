//! What an agent tells Atlas about a screen and a step, through the tool interfaces only.

use atlas_import::droidtask::{Step, StepAction, Trace};
use atlas_import::state_html::{title, Element};
use atlas_model::ui_fingerprint;
use serde_json::{json, Value};

use crate::caller::{CallError, ToolCaller};

/// The widgets an agent sends for a screen: `{id: index, text: label, type: tag}`.
pub fn widgets(screen: &[Element]) -> Value {
    Value::Array(screen.iter().map(|e| serde_json::to_value(e.widget()).unwrap_or_default()).collect())
}

/// The page a screen is: `match_current_page` on its widgets, and when nothing matches (and
/// `add` allows), a new page named by its title and structural fingerprint.
pub fn page_for_screen(caller: &dyn ToolCaller, app_id: &str, screen: &[Element], add: bool) -> Result<Option<String>, CallError> {
    let ui = json!({ "widgets": widgets(screen) });
    let matched = caller.call("match_current_page", json!({ "app_id": app_id, "ui_hierarchy": ui }));
    match matched {
        Ok(m) if m["matched"] == true => return Ok(m["page"]["page_id"].as_str().map(str::to_string)),
        Ok(_) => {}
        // A new app has no pages yet: that is "nothing matches", not a failure.
        Err(e) if e.code == "NOT_FOUND" || e.code == "PAGE_NOT_FOUND" => {}
        Err(e) => return Err(e),
    }
    if !add {
        return Ok(None);
    }
    let widgets: Vec<atlas_model::Widget> = screen.iter().map(Element::widget).collect();
    let name = format!("{} {}", title(screen), &ui_fingerprint(&widgets)[..6]).trim().to_string();
    let added = caller.call("add_page", json!({ "app_id": app_id, "page_name": name, "ui_hierarchy": ui }))?;
    Ok(added["page_id"].as_str().map(str::to_string))
}

/// The action of a step as `report_transition` takes it: the element by its label (its index only
/// when it has none, since indices shift as lists change), and the text typed.
pub fn reported_action(step: &Step) -> Option<Value> {
    let element = step.element()?;
    let label = element.label();
    let mut action = json!({ "type": if matches!(step.action, StepAction::Input(..)) { "input" } else { "click" } });
    if label.is_empty() {
        action["widget"] = json!(element.index.to_string());
    } else {
        action["widget_text"] = json!(label);
    }
    if let StepAction::Input(_, text) = &step.action {
        action["input_text"] = json!(text);
    }
    Some(action)
}

/// Reports one step that led from `from` to `to`.
pub fn report_step(caller: &dyn ToolCaller, app_id: &str, from: &str, step: &Step, to: &str, session: &str, intent: Option<&str>) -> Result<(), CallError> {
    let Some(action) = reported_action(step) else { return Ok(()) };
    let mut body = json!({ "from_page": from, "to_page": to, "action": action, "success": true, "app_id": app_id, "session_id": session });
    if let Some(intent) = intent {
        body["intent"] = json!(intent);
    }
    caller.call("report_transition", body).map(|_| ())
}

/// What teaching a trace added.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Taught {
    pub screens: usize,
    pub steps: usize,
    pub intents: usize,
    /// The page each screen of the trace was taken for, in order.
    pub pages: Vec<String>,
}

/// Teaches a recorded trace: every screen becomes a page, every step a reported transition in one
/// session, and a finished task its intent with the final page as target.
pub fn teach_trace(caller: &dyn ToolCaller, app_id: &str, trace: &Trace, session: &str) -> Result<Taught, CallError> {
    let mut taught = Taught::default();
    let mut pages = Vec::with_capacity(trace.steps.len());
    for step in &trace.steps {
        let page = page_for_screen(caller, app_id, &step.screen, true)?.unwrap_or_default();
        pages.push(page);
        taught.screens += 1;
    }
    let intent = trace.task.as_deref();
    for (i, step) in trace.steps.iter().enumerate() {
        if let Some(next) = pages.get(i + 1) {
            if step.element().is_some() {
                report_step(caller, app_id, &pages[i], step, next, session, intent)?;
                taught.steps += 1;
            }
        }
    }
    if let (Some(intent), Some(last), Some(final_step)) = (intent, pages.last(), trace.steps.last()) {
        if final_step.action == StepAction::Finish {
            caller.call("register_intent", json!({ "app_id": app_id, "intent_text": intent, "target_page": last }))?;
            taught.intents += 1;
        }
    }
    taught.pages = pages;
    Ok(taught)
}
