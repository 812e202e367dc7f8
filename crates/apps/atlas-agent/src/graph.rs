//! The graph in the agent's loop: each screen is matched to a page, each executed step is
//! reported (with the task as its intent and the run as its session), and when the graph's
//! calibrated confidence for the next action reaches the fast-path threshold the action is taken
//! without asking the model. A task done once is then replayed from memory; a new task on a
//! known app costs model calls only where the graph is unsure.
//!
//! Everything goes through the tool interfaces ([`ToolCaller`]), so the agent works the same
//! against a remote `atlas serve` or an embedded service.

use atlas_action::Action;
use atlas_device::Point;
use atlas_model::{Widget, ui_fingerprint};
use serde_json::{Value, json};

use crate::caller::{CallError, ToolCaller};

/// The agent's link to the graph for one run.
pub struct GraphLink<'a> {
    caller: &'a dyn ToolCaller,
    /// The app the graph knows the phone's app by; the current app's package when `None`.
    app_id: Option<String>,
    /// Take the graph's action without the model at or above this confidence.
    pub fast_path: f64,
    session: String,
    /// The page the last executed action started from, the action as the graph takes it (none
    /// when it cannot be reported: a launch, a wait), and the screen it started from.
    pending: Option<Pending>,
    /// The field tapped last: typing goes there.
    focused: Option<Widget>,
    /// The page and action of the last step, and whether the step left that page.
    last: Option<(String, Value, bool)>,
    /// The app the steps were reported under.
    reported_app: Option<String>,
    /// A step ran that the graph cannot replay (a knowledge lookup, a swipe, typing into no
    /// known field): the run is then no memory to replay, however it ended.
    unreplayable: bool,
}

/// An executed step waiting for the screen it led to.
struct Pending {
    page: String,
    action: Value,
    before: Vec<Widget>,
    /// A tap into a text field: it readies typing, and may leave the screen as it was.
    focus: bool,
}

/// What the graph says about the next step.
pub struct Suggestion {
    /// The action, resolved on the screen, and the point to tap first (a field to type into).
    pub action: Option<(Action, Option<Point>)>,
    pub confidence: f64,
    /// Context for the model when it is asked after all.
    pub hint: Value,
    /// The graph's action as it gave it.
    pub raw: Value,
    /// What the answer rests on (`memory`, `labels`, `path`), or why there is none.
    pub basis: String,
}

impl<'a> GraphLink<'a> {
    pub fn new(
        caller: &'a dyn ToolCaller,
        app_id: Option<String>,
        fast_path: f64,
        session: &str,
    ) -> GraphLink<'a> {
        GraphLink {
            caller,
            app_id,
            fast_path,
            session: session.to_string(),
            pending: None,
            focused: None,
            last: None,
            reported_app: None,
            unreplayable: false,
        }
    }

    fn app(&self, package: &str) -> String {
        self.app_id.clone().unwrap_or_else(|| package.to_string())
    }

    /// The page of the screen (matched, or added), after reporting the step that led here.
    pub fn arrive(
        &mut self,
        package: &str,
        widgets: &[Widget],
        task: &str,
    ) -> Result<String, String> {
        let app = self.app(package);
        let title = widgets
            .iter()
            .map(|w| w.text.trim())
            .find(|t| !t.is_empty())
            .unwrap_or("screen");
        let page = page_for_screen(self.caller, &app, title, widgets, true)
            .map_err(|e| e.to_string())?
            .unwrap_or_default();
        if let Some((from, _, moved)) = &mut self.last {
            *moved = *from != page;
        }
        if let Some(step) = self.pending.take()
            && !page.is_empty()
        {
            // A step after which the screen is exactly as it was did nothing: reported as failed,
            // it counts against its edge and is not replayed as part of the task's way.
            let did_nothing = !step.focus && step.before == widgets;
            let mut report = json!({"app_id": app, "from_page": step.page, "to_page": page,
                "action": step.action, "success": !did_nothing, "session_id": self.session, "intent": task});
            if did_nothing {
                report["reason"] = json!("the screen did not change");
            }
            self.caller
                .call("report_transition", report)
                .map_err(|e| e.to_string())?;
            self.reported_app = Some(app);
        }
        Ok(page)
    }

    /// Says how the run ended, so that only a finished task is replayed to the next agent (and
    /// only one whose every step the graph saw).
    pub fn end(&self, task: &str, finished: bool) -> Result<(), String> {
        let Some(app) = &self.reported_app else {
            return Ok(());
        };
        let replayable = finished && !self.unreplayable;
        let ended = json!({"app_id": app, "session_id": self.session, "intent": task, "finished": replayable});
        self.caller
            .call("end_session", ended)
            .map(|_| ())
            .map_err(|e| e.to_string())
    }

    /// The graph's next action on `page` for `task`, resolved on the screen's widgets.
    pub fn suggest(
        &self,
        package: &str,
        page: &str,
        task: &str,
        widgets: &[Widget],
        size: (u32, u32),
    ) -> Suggestion {
        let asked = self.caller.call(
            "get_next_action",
            json!({"app_id": self.app(package), "intent": task, "current_page": page, "session_id": self.session}),
        );
        let Ok(answer) = asked else {
            return Suggestion {
                action: None,
                confidence: 0.0,
                hint: Value::Null,
                raw: Value::Null,
                basis: String::new(),
            };
        };
        let action = &answer["action"];
        // Only a confidence the graph states counts: an answer without one is never sure.
        let confidence = action["confidence"]
            .as_f64()
            .or(answer["confidence"].as_f64())
            .unwrap_or(0.0);
        let hint = json!({
            "suggested": if action.is_null() { json!(if answer["is_complete"] == true { "finish" } else { "unknown" }) } else { action["description"].clone() },
            "confidence": (confidence * 1000.0).round() / 1000.0,
        });
        // An action that changed nothing here is not repeated without asking: the screen may
        // need something the graph does not know (a toggle's state, a field's content).
        let repeated = self
            .last
            .as_ref()
            .is_some_and(|(from, done, moved)| !moved && from == page && *done == *action);
        let confidence = if repeated { 0.0 } else { confidence };
        // A finish ends the run, so no later step can undo a wrong one: the graph finishes a
        // task only where a remembered session of it ended, never on a guess from labels or a
        // path's target page.
        let remembered = answer["basis"] == "memory";
        let resolved = if action.is_null() {
            (answer["is_complete"] == true && remembered).then(|| {
                (
                    Action::Finish {
                        message: "done (a remembered session of this task finished here)".into(),
                    },
                    None,
                )
            })
        } else {
            resolve(action, widgets, size)
        };
        Suggestion {
            action: resolved,
            confidence,
            hint,
            raw: action.clone(),
            basis: answer["basis"]
                .as_str()
                .or(answer["error"].as_str())
                .unwrap_or_default()
                .to_string(),
        }
    }

    /// Remembers what ran from `page` (after a tap on `focus`, when the graph typed into a
    /// field), to report it when the next screen is known.
    pub fn executed(
        &mut self,
        page: &str,
        action: &Action,
        focus: Option<Point>,
        widgets: &[Widget],
        size: (u32, u32),
    ) {
        if let Some(p) = focus {
            self.focused = widget_at(widgets, p).cloned();
        }
        let at = |p: &[u16; 2]| {
            Point::from_relative(u32::from(p[0]), u32::from(p[1]), size.0, size.1).ok()
        };
        let mut focus_tap = false;
        let reported = match action {
            Action::Back => Some(json!({"type": "back"})),
            Action::Tap { element, .. } => at(element).and_then(|p| widget_at(widgets, p)).map(|w| {
                if w.is_text_field() {
                    self.focused = Some(w.clone());
                    focus_tap = true;
                }
                json!({"type": "click", "widget": w.id, "widget_text": w.text})
            }),
            Action::Type { text } | Action::TypeName { text } => self.focused.as_ref().map(|w| {
                json!({"type": "input", "widget": w.id, "widget_text": label(w), "input_text": text})
            }),
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
        self.unreplayable |= invisible && reported.is_none();
        self.pending = reported.map(|action| Pending {
            page: page.to_string(),
            action,
            before: widgets.to_vec(),
            focus: focus_tap,
        });
    }

    /// Remembers the graph's action taken on `page`, to see next step whether it moved.
    pub fn took(&mut self, page: &str, suggested: Value) {
        self.last = Some((page.to_string(), suggested, false));
    }
}

/// The smallest widget under a point.
fn widget_at(widgets: &[Widget], p: Point) -> Option<&Widget> {
    let (x, y) = (i64::from(p.x), i64::from(p.y));
    widgets
        .iter()
        .filter_map(|w| w.rect().map(|r| (w, r)))
        .filter(|(_, [l, t, r, b])| x >= *l && x < *r && y >= *t && y < *b)
        .min_by_key(|(_, [l, t, r, b])| (r - l) * (b - t))
        .map(|(w, _)| w)
}

/// What names a field: its text, else its id (a field's text is what it holds).
fn label(w: &Widget) -> &str {
    if w.text.is_empty() { &w.id } else { &w.text }
}

/// The graph's action as the grammar's, on the widget it names (by id, else by text).
fn resolve(
    action: &Value,
    widgets: &[Widget],
    (width, height): (u32, u32),
) -> Option<(Action, Option<Point>)> {
    let kind = action["action_type"].as_str().unwrap_or_default();
    if kind == "back" {
        return Some((Action::Back, None));
    }
    let id = action["widget_id"].as_str().unwrap_or_default();
    let text = action["widget_text"].as_str().unwrap_or_default().trim();
    // The widget the action names must be one: ids repeat down a list (every row's title has
    // the same id) and texts repeat across a screen (two "OK"s), so each narrows the other, and
    // what stays ambiguous is not guessed.
    let placed: Vec<&Widget> = widgets.iter().filter(|w| w.rect().is_some()).collect();
    let same_text = |w: &&Widget| !text.is_empty() && w.text.trim() == text;
    let with_id: Vec<&Widget> = placed
        .iter()
        .copied()
        .filter(|w| !id.is_empty() && w.id == id)
        .collect();
    let pool = if with_id.is_empty() { placed } else { with_id };
    let chosen: Vec<&Widget> = match pool.as_slice() {
        [one] if text.is_empty() || same_text(one) || !id.is_empty() => vec![*one],
        _ => pool.iter().copied().filter(same_text).collect(),
    };
    let [widget] = chosen.as_slice() else {
        return None;
    };
    let [l, t, r, b] = widget.rect()?;
    let centre = Point {
        x: ((l + r) / 2).max(0) as u32,
        y: ((t + b) / 2).max(0) as u32,
    };
    let element = centre.relative(width, height);
    match kind {
        "input" => {
            let focus = centre;
            let typed = action["input_text"]
                .as_str()
                .unwrap_or_default()
                .to_string();
            Some((Action::Type { text: typed }, Some(focus)))
        }
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

/// The page a screen is: `match_current_page` on its widgets, and when nothing matches (and
/// `add` allows), a new page named by its title and structural fingerprint.
pub fn page_for_screen(
    caller: &dyn ToolCaller,
    app_id: &str,
    title: &str,
    widgets: &[Widget],
    add: bool,
) -> Result<Option<String>, CallError> {
    let ui = json!({ "widgets": widgets });
    let matched = caller.call(
        "match_current_page",
        json!({ "app_id": app_id, "ui_hierarchy": ui }),
    );
    match matched {
        Ok(m) if m["matched"] == true => {
            return Ok(m["page"]["page_id"].as_str().map(str::to_string));
        }
        Ok(_) => {}
        // A new app has no pages yet: that is "nothing matches", not a failure.
        Err(e) if e.code == "NOT_FOUND" || e.code == "PAGE_NOT_FOUND" => {}
        Err(e) => return Err(e),
    }
    if !add {
        return Ok(None);
    }
    let name = format!(
        "{} {}",
        title.chars().take(40).collect::<String>(),
        &ui_fingerprint(widgets)[..6]
    )
    .trim()
    .to_string();
    let added = caller.call(
        "add_page",
        json!({ "app_id": app_id, "page_name": name, "ui_hierarchy": ui }),
    )?;
    Ok(added["page_id"].as_str().map(str::to_string))
}
