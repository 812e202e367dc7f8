//! DroidBot's `utg.js`: the UI transition graph a run leaves behind (`var utg = {...}`), for
//! output folders that kept nothing else (`states/` and `events/` are richer and preferred).
//!
//! A node is a screen: its texts come from `content` (package, activity, state hash, then the
//! views' resource ids and texts, comma-separated). An edge's events are the actions that led
//! from one screen to the other. `utg.js` keeps no label for the view an event touched, only a
//! hash of its signature, so a tap is taught as a tap on that view id: the graph learns which
//! screen leads where and how often, and a page's labels still come from its texts.

use std::collections::HashMap;
use std::path::Path;

use atlas_model::Widget;
use serde::Deserialize;

use crate::ImportError;
use crate::recording::{RecordedAction, RecordedStep, Recording};

#[derive(Deserialize)]
struct Utg {
    #[serde(default)]
    nodes: Vec<Node>,
    #[serde(default)]
    edges: Vec<Edge>,
}

#[derive(Deserialize)]
struct Node {
    id: String,
    #[serde(default)]
    label: String,
    #[serde(default)]
    content: String,
}

#[derive(Deserialize)]
struct Edge {
    from: String,
    to: String,
    #[serde(default)]
    events: Vec<EdgeEvent>,
}

#[derive(Deserialize)]
struct EdgeEvent {
    #[serde(default)]
    event_str: String,
    #[serde(default)]
    event_type: String,
}

/// The value of `key=` in an event string such as `TouchEvent(state=…, view=9f2c…)`.
fn field<'a>(event_str: &'a str, key: &str) -> Option<&'a str> {
    let start = event_str.find(&format!("{key}="))? + key.len() + 1;
    let rest = &event_str[start..];
    let end = rest.find([',', ')']).unwrap_or(rest.len());
    Some(rest[..end].trim()).filter(|v| !v.is_empty() && *v != "None")
}

fn action_of(event: &EdgeEvent) -> RecordedAction {
    let kind = event.event_type.to_ascii_lowercase();
    if kind == "key" {
        return if field(&event.event_str, "name").is_some_and(|n| n.eq_ignore_ascii_case("BACK")) {
            RecordedAction::Back
        } else {
            RecordedAction::Other
        };
    }
    let touches = matches!(
        kind.as_str(),
        "touch" | "click" | "long_touch" | "long_click" | "set_text"
    );
    match field(&event.event_str, "view") {
        Some(view) if touches => RecordedAction::TapView(view.to_string()),
        _ => RecordedAction::Other,
    }
}

/// A node's screen: its texts (the last line of `content`) as widgets, titled by the first.
fn screen_of(node: &Node) -> (String, Vec<Widget>) {
    let lines: Vec<&str> = node.content.lines().collect();
    // package, activity, state_str, resource ids, texts
    let texts = if lines.len() >= 5 {
        lines[4..].join(",")
    } else {
        String::new()
    };
    let widgets: Vec<Widget> = texts
        .split(',')
        .map(str::trim)
        .filter(|t| !t.is_empty())
        .map(|t| Widget {
            text: t.to_string(),
            ..Default::default()
        })
        .collect();
    let title = widgets
        .first()
        .map(|w| w.text.chars().take(40).collect())
        .unwrap_or_else(|| node.label.clone());
    (title, widgets)
}

/// Reads `utg.js` (or plain JSON) into one two-screen recording per event of every edge.
pub fn read(path: &Path) -> Result<Vec<Recording>, ImportError> {
    let text = std::fs::read_to_string(path).map_err(|e| ImportError::io(path, e))?;
    let json = text
        .trim_start()
        .strip_prefix("var utg =")
        .unwrap_or(&text)
        .trim()
        .trim_end_matches(';');
    let utg: Utg = serde_json::from_str(json)
        .map_err(|e| ImportError::unreadable(path, "not a DroidBot UTG", e))?;
    let screens: HashMap<&str, (String, Vec<Widget>)> = utg
        .nodes
        .iter()
        .map(|n| (n.id.as_str(), screen_of(n)))
        .collect();
    let mut runs = Vec::new();
    for edge in &utg.edges {
        let (Some(from), Some(to)) = (
            screens.get(edge.from.as_str()),
            screens.get(edge.to.as_str()),
        ) else {
            continue;
        };
        for event in &edge.events {
            let action = action_of(event);
            if action == RecordedAction::Other {
                continue;
            }
            let steps = vec![
                RecordedStep {
                    title: from.0.clone(),
                    widgets: from.1.clone(),
                    action,
                },
                RecordedStep {
                    title: to.0.clone(),
                    widgets: to.1.clone(),
                    action: RecordedAction::Other,
                },
            ];
            runs.push(Recording {
                name: format!("utg-{}", runs.len() + 1),
                task: None,
                steps,
            });
        }
    }
    Ok(runs)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nodes_become_screens_and_events_steps() {
        let dir = tempfile::tempdir().unwrap();
        let utg = serde_json::json!({
            "nodes": [
                { "id": "A", "label": "MainActivity", "content": "com.app\ncom.app/.MainActivity\nA\ncom.app:id/settings\nSettings,Notes,新建笔记" },
                { "id": "B", "label": "SettingsActivity", "content": "com.app\ncom.app/.SettingsActivity\nB\n\nFont size,Theme" }
            ],
            "edges": [
                { "from": "A", "to": "B", "id": "A-->B", "events": [
                    { "event_str": "TouchEvent(state=A, view=9f2ce1)", "event_id": 2, "event_type": "touch" },
                    { "event_str": "IntentEvent(intent=am start com.app)", "event_id": 1, "event_type": "intent" } ] },
                { "from": "B", "to": "A", "id": "B-->A", "events": [ { "event_str": "KeyEvent(state=B, name=BACK)", "event_id": 3, "event_type": "key" } ] },
                { "from": "B", "to": "Z", "id": "B-->Z", "events": [ { "event_str": "TouchEvent(state=B, view=77)", "event_id": 4, "event_type": "touch" } ] }
            ],
            "num_nodes": 2
        });
        let path = dir.path().join("utg.js");
        std::fs::write(&path, format!("var utg = \n{utg}")).unwrap();
        let runs = read(&path).unwrap();
        // The app launch is not a step; the edge to an unknown screen is skipped.
        assert_eq!(runs.len(), 2, "{runs:?}");
        assert_eq!(
            runs[0].steps[0].action,
            RecordedAction::TapView("9f2ce1".into())
        );
        assert_eq!(
            runs[0].steps[0]
                .widgets
                .iter()
                .map(|w| w.text.as_str())
                .collect::<Vec<_>>(),
            ["Settings", "Notes", "新建笔记"]
        );
        assert_eq!(runs[0].steps[1].title, "Font size");
        assert_eq!(runs[1].steps[0].action, RecordedAction::Back);
        // A DroidBot folder with nothing but utg.js is read from it.
        assert_eq!(crate::droidbot::read(dir.path()).unwrap(), runs);
        std::fs::write(&path, "var utg = {oops").unwrap();
        assert!(
            read(&path)
                .unwrap_err()
                .to_string()
                .contains("not a DroidBot UTG")
        );
    }
}
