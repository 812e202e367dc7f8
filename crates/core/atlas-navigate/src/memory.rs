//! Task memory: remembered sessions replayed for an instruction of the same template.
//!
//! A successful session is a trace of steps for its instruction. When an agent asks for the next
//! action, the traces whose instructions share the asked one's template (values aside) are
//! aligned with what the agent's own session has done so far; where they agree and continue from
//! the current page, their next step is the answer, with the asked instruction's values put in
//! place of the remembered ones. Disagreement between traces, or a value that cannot be placed,
//! makes the answer "unsure" rather than a guess.

use atlas_graph::AppGraph;
use atlas_model::{Action, Trace, TraceStep};
use atlas_text::{Template, substitute};

/// Templates at least this alike count as the same task.
pub(crate) const SAME_TEMPLATE: f64 = 0.99;

/// What remembered sessions say to do next.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Recall {
    /// Take this action; it led to `expected_page` before.
    Act {
        action: Action,
        expected_page: String,
        remaining: usize,
        confidence: f64,
    },
    /// The remembered sessions ended here, the first one's agent with these words (the asked
    /// instruction's values in place of its own), when it said.
    Done {
        confidence: f64,
        message: Option<String>,
    },
}

/// Whether two actions are the same step: type, widget (see [`Action::same_widget`]) and typed
/// text.
fn same_step(a: &Action, b: &Action) -> bool {
    a.action_type == b.action_type && a.same_widget(b) && a.input_text == b.input_text
}

/// The remembered step with the asked instruction's values in place. `None` when the step uses a
/// remembered value the asked instruction has no counterpart for.
fn adapt(step: &Action, map: &[(&str, &str)], labels_here: &[&str]) -> Option<Action> {
    let mut action = step.clone();
    if !action.input_text.is_empty()
        && let Some(text) = substitute(&action.input_text, map)
    {
        action.input_text = text;
    }
    // A value the asked instruction shares with the remembered one changes nothing.
    let changed = substitute(&action.widget_text, map)
        .filter(|text| !text.trim().eq_ignore_ascii_case(action.widget_text.trim()));
    if let Some(text) = changed {
        // A tap on a value ("5 minutes") becomes a tap on the asked one ("1 minute"): only if
        // the page shows such a widget, matched loosely on the value itself.
        let wanted = map
            .iter()
            .find(|(old, _)| {
                action
                    .widget_text
                    .to_lowercase()
                    .contains(&old.to_lowercase())
            })
            .map(|(_, new)| new.to_lowercase())?;
        let found = labels_here
            .iter()
            .find(|l| l.trim().eq_ignore_ascii_case(text.trim()))
            .or_else(|| {
                let mut hits = labels_here.iter().filter(|l| {
                    l.to_lowercase()
                        .split(|c: char| !c.is_alphanumeric())
                        .any(|w| w == wanted)
                });
                let first = hits.next();
                if hits.next().is_some() { None } else { first }
            })?;
        action.widget_text = found.to_string();
        action.widget_id.clear();
    }
    Some(action)
}

/// The agent's own steps so far in `session` for `intent`.
pub(crate) fn session_steps<'a>(
    app: &'a AppGraph,
    session: Option<&str>,
    intent: &str,
) -> &'a [TraceStep] {
    let Some(session) = session else { return &[] };
    app.traces()
        .find(|t| t.session_id == session && t.intent == intent)
        .map(|t| t.steps.as_slice())
        .unwrap_or(&[])
}

/// What the traces of `app` say to do on `current_page` for `intent`, given the steps `taken`.
pub(crate) fn recall(
    app: &AppGraph,
    intent: &str,
    current_page: &str,
    session: Option<&str>,
) -> Option<Recall> {
    let mut memories = app
        .traces()
        .filter(|t| t.succeeded() && Some(t.session_id.as_str()) != session)
        .peekable();
    // Most apps remember nothing yet: then there is nothing to segment or compare.
    memories.peek()?;
    let asked = Template::of(intent);
    let taken = session_steps(app, session, intent);
    let labels_here: Vec<&str> = app
        .page(current_page)
        .map(|p| p.widgets.iter().map(|w| w.text.as_str()).collect())
        .unwrap_or_default();
    let mut answers: Vec<(f64, Recall)> = Vec::new();
    for trace in memories {
        let remembered = Template::of(&trace.intent);
        let similarity = asked.similarity(&remembered);
        if similarity < SAME_TEMPLATE {
            continue;
        }
        let Some(map) = remembered.value_map(&asked) else {
            continue;
        };
        if let Some(answer) =
            continue_trace(trace, taken, current_page, &map, &labels_here, similarity)
        {
            answers.push((similarity, answer));
        }
    }
    let (_, first) = answers.first()?.clone();
    // Every agreeing memory strengthens the answer; any disagreement makes it unsure.
    if answers.iter().any(|(_, a)| !agree(a, &first)) {
        return None;
    }
    Some(first)
}

fn agree(a: &Recall, b: &Recall) -> bool {
    match (a, b) {
        (Recall::Done { .. }, Recall::Done { .. }) => true,
        (Recall::Act { action: x, .. }, Recall::Act { action: y, .. }) => same_step(x, y),
        _ => false,
    }
}

/// A session's way without its detours: a step that failed (did nothing), or a step to another
/// page followed at once by Back to the page it left, changed nothing, and the next agent should
/// not repeat it. Detours inside detours go too.
fn without_detours(steps: &[TraceStep]) -> Vec<TraceStep> {
    let mut way: Vec<TraceStep> = Vec::with_capacity(steps.len());
    for step in steps.iter().filter(|s| s.success) {
        let undoes_last = step.action.action_type == "back"
            && way.last().is_some_and(|last| {
                last.action.action_type != "back"
                    && last.to_page == step.from_page
                    && last.from_page == step.to_page
                    && last.from_page != last.to_page
            });
        if undoes_last {
            way.pop();
        } else {
            way.push(step.clone());
        }
    }
    way
}

/// Where `trace` goes on after the steps `taken`, if they are its first steps (values aside) and
/// it continues from `current_page`.
fn continue_trace(
    trace: &Trace,
    taken: &[TraceStep],
    current_page: &str,
    map: &[(&str, &str)],
    labels_here: &[&str],
    confidence: f64,
) -> Option<Recall> {
    let way = without_detours(&trace.steps);
    // A session whose every step was undone still did something (a dialog's choice, a row
    // marked on the way back): its way is not "nothing to do", and this memory cannot say what.
    let acted = trace.steps.iter().any(|s| s.success);
    if way.is_empty() && acted {
        return None;
    }
    let taken = without_detours(taken);
    let taken = taken.as_slice();
    let trace = &Trace {
        steps: way,
        ..trace.clone()
    };
    let position = if taken.is_empty() {
        0
    } else {
        if taken.len() > trace.steps.len() {
            return None;
        }
        for (mine, theirs) in taken.iter().zip(&trace.steps) {
            let theirs_adapted = adapt(&theirs.action, map, &[mine.action.widget_text.as_str()])
                .unwrap_or_else(|| theirs.action.clone());
            let same =
                same_step(&mine.action, &theirs.action) || same_step(&mine.action, &theirs_adapted);
            if mine.from_page != theirs.from_page || !same {
                return None;
            }
        }
        taken.len()
    };
    match trace.steps.get(position) {
        None => {
            let ended = trace.steps.last().map(|s| s.to_page.as_str());
            let message = trace
                .finish_message
                .as_ref()
                .map(|m| substitute(m, map).unwrap_or_else(|| m.clone()));
            (ended == Some(current_page) || (trace.steps.is_empty() && taken.is_empty())).then_some(
                Recall::Done {
                    confidence,
                    message,
                },
            )
        }
        Some(next) if next.from_page == current_page => {
            let action = adapt(&next.action, map, labels_here)?;
            Some(Recall::Act {
                action,
                expected_page: next.to_page.clone(),
                remaining: trace.steps.len() - position,
                confidence,
            })
        }
        Some(_) => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn step(from: &str, to: &str, kind: &str, widget: &str) -> TraceStep {
        TraceStep {
            from_page: from.into(),
            to_page: to.into(),
            action: Action {
                action_type: kind.into(),
                widget_text: widget.into(),
                ..Action::default()
            },
            success: true,
            latency_ms: 0,
        }
    }

    #[test]
    fn a_session_undone_to_its_first_page_says_nothing() {
        let trace = Trace {
            trace_id: "t".into(),
            app_id: "messenger".into(),
            session_id: "s".into(),
            intent: "mark the chat with Bob as unread".into(),
            steps: vec![
                step("chats", "chat", "click", "Bob"),
                step("chat", "chats", "back", ""),
            ],
            finished: Some(true),
            finish_message: None,
            app_version: None,
            checks: Vec::new(),
            created_at: String::new(),
            updated_at: String::new(),
        };
        assert_eq!(continue_trace(&trace, &[], "chats", &[], &[], 1.0), None);
        // A session that did nothing at all ended where it began: done there.
        let nothing = Trace {
            steps: vec![],
            ..trace
        };
        assert!(matches!(
            continue_trace(&nothing, &[], "chats", &[], &[], 1.0),
            Some(Recall::Done { .. })
        ));
    }

    #[test]
    fn a_detour_and_its_back_leave_the_way_and_toggles_stay() {
        let steps = [
            step("home", "menu", "click", "More"),
            step("menu", "about", "click", "About"),
            step("about", "menu", "back", ""),
            step("menu", "home", "back", ""),
            step("home", "home", "click", "Dark mode"),
            step("home", "list", "click", "Notes"),
        ];
        let way = without_detours(&steps);
        let labels: Vec<&str> = way.iter().map(|s| s.action.widget_text.as_str()).collect();
        assert_eq!(labels, ["Dark mode", "Notes"]);
        // A Back that returns somewhere else is a step of the way.
        let steps = [step("a", "b", "click", "Go"), step("b", "c", "back", "")];
        assert_eq!(without_detours(&steps).len(), 2);
    }
}
