//! A DroidBot output folder: `states/*.json` (each screen's full view tree, named by its
//! `state_str`) and `events/*.json` (each event with its `start_state` and `stop_state`), the
//! format DroidBot and HMDroidbot write.
//!
//! Events are read in the order of their tags (timestamps). A run is a chain of events where each
//! starts on the screen the previous one stopped on; an app launch, a restart or a screen that was
//! not saved ends the run, so no transition is ever invented across a gap. A folder with only
//! `utg.js` is read by [`crate::utg`].

use std::collections::HashMap;
use std::path::Path;

pub use atlas_droidbot::{Event, EventFile, View};
use atlas_model::Widget;
use serde::Deserialize;

use crate::ImportError;
use crate::recording::{RecordedAction, RecordedStep, Recording};

#[derive(Deserialize)]
struct StateFile {
    state_str: String,
    #[serde(default)]
    views: Vec<View>,
}

/// A screen: a title and its widgets.
#[derive(Clone)]
struct Screen {
    title: String,
    widgets: Vec<Widget>,
}

fn read_json<T: serde::de::DeserializeOwned>(path: &Path) -> Result<T, ImportError> {
    let bytes = std::fs::read(path).map_err(|e| ImportError::io(path, e))?;
    serde_json::from_slice(&bytes).map_err(|e| ImportError::unreadable(path, "", e))
}

fn json_files(dir: &Path) -> Result<Vec<std::path::PathBuf>, ImportError> {
    let mut files: Vec<_> = std::fs::read_dir(dir)
        .map_err(|e| ImportError::io(dir, e))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "json"))
        .collect();
    files.sort();
    Ok(files)
}

/// The step an event is on its start screen; the screen gains the acted-on view if it lacked it.
fn step_of(event: &Event, screen: &Screen) -> RecordedStep {
    let mut widgets = screen.widgets.clone();
    let mut index_of = |view: &View| -> usize {
        let bounds = view.bounds();
        let label = view.label();
        match widgets
            .iter()
            .position(|w| !bounds.is_empty() && w.bounds == bounds && w.text == label)
        {
            Some(i) => i,
            None => {
                widgets.push(view.widget().unwrap_or_else(|| Widget {
                    text: label.to_string(),
                    bounds,
                    ..Default::default()
                }));
                widgets.len() - 1
            }
        }
    };
    let action = match (event.event_type.as_str(), &event.view) {
        ("click" | "long_click" | "touch", Some(view)) => RecordedAction::Tap(index_of(view)),
        ("set_text", Some(view)) => {
            RecordedAction::Input(index_of(view), event.text.clone().unwrap_or_default())
        }
        ("key", _)
            if event
                .name
                .as_deref()
                .is_some_and(|n| n.eq_ignore_ascii_case("BACK")) =>
        {
            RecordedAction::Back
        }
        _ => RecordedAction::Other,
    };
    RecordedStep {
        title: screen.title.clone(),
        widgets,
        action,
    }
}

/// Reads a DroidBot output folder into its runs.
pub fn read(dir: &Path) -> Result<Vec<Recording>, ImportError> {
    // A folder that kept only the transition graph is read from it.
    let utg = dir.join("utg.js");
    if utg.is_file() && !dir.join("states").is_dir() && !dir.join("events").is_dir() {
        return crate::utg::read(&utg);
    }
    let mut screens: HashMap<String, Screen> = HashMap::new();
    for path in json_files(&dir.join("states"))? {
        let state: StateFile = read_json(&path)?;
        let widgets: Vec<Widget> = state.views.iter().filter_map(View::widget).collect();
        let title = widgets
            .iter()
            .find(|w| !w.text.is_empty())
            .map(|w| w.text.chars().take(40).collect())
            .unwrap_or_default();
        screens.insert(state.state_str, Screen { title, widgets });
    }
    let mut events: Vec<EventFile> = json_files(&dir.join("events"))?
        .iter()
        .map(|p| read_json(p))
        .collect::<Result<_, _>>()?;
    if screens.is_empty() && events.is_empty() {
        return Err(ImportError::format(
            dir,
            "no states/*.json or events/*.json: not a DroidBot output folder".into(),
        ));
    }
    events.sort_by(|a, b| a.tag.cmp(&b.tag));

    let mut runs: Vec<Recording> = Vec::new();
    let mut current: Vec<RecordedStep> = Vec::new();
    let mut last_stop: Option<String> = None;
    let close =
        |steps: &mut Vec<RecordedStep>, last_stop: &Option<String>, runs: &mut Vec<Recording>| {
            if let Some(end) = last_stop.as_ref().and_then(|s| screens.get(s))
                && !steps.is_empty()
            {
                steps.push(RecordedStep {
                    title: end.title.clone(),
                    widgets: end.widgets.clone(),
                    action: RecordedAction::Other,
                });
            }
            if steps
                .iter()
                .filter(|s| s.action != RecordedAction::Other)
                .count()
                > 0
            {
                runs.push(Recording {
                    name: format!("droidbot-{}", runs.len() + 1),
                    task: None,
                    steps: std::mem::take(steps),
                });
            }
            steps.clear();
        };
    for event in &events {
        let start = event.start_state.as_ref().and_then(|s| screens.get(s));
        let continues = last_stop.is_some() && last_stop == event.start_state;
        let step = start.map(|screen| step_of(&event.event, screen));
        match step {
            Some(step)
                if step.action != RecordedAction::Other && (continues || current.is_empty()) =>
            {
                current.push(step);
                last_stop = event.stop_state.clone();
            }
            Some(step) if step.action != RecordedAction::Other => {
                close(&mut current, &last_stop, &mut runs);
                current.push(step);
                last_stop = event.stop_state.clone();
            }
            _ => {
                close(&mut current, &last_stop, &mut runs);
                last_stop = event.stop_state.clone().filter(|s| screens.contains_key(s));
            }
        }
    }
    close(&mut current, &last_stop, &mut runs);
    Ok(runs)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn view(text: &str, id: &str, bounds: [[i64; 2]; 2]) -> serde_json::Value {
        serde_json::json!({ "text": text, "resource_id": format!("com.app:id/{id}"), "class": "android.widget.Button", "bounds": bounds, "clickable": true, "visible": true })
    }

    fn write(dir: &Path, kind: &str, name: &str, value: serde_json::Value) {
        std::fs::create_dir_all(dir.join(kind)).unwrap();
        std::fs::write(
            dir.join(kind).join(format!("{name}.json")),
            value.to_string(),
        )
        .unwrap();
    }

    #[test]
    fn events_chain_into_runs_that_break_at_launches_and_gaps() {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        let home = view("Settings", "settings", [[0, 0], [100, 100]]);
        let field = serde_json::json!({ "text": "Name", "class": "android.widget.EditText", "editable": true, "bounds": [[0, 100], [100, 200]] });
        write(
            d,
            "states",
            "state_1",
            serde_json::json!({ "state_str": "A", "views": [home] }),
        );
        write(
            d,
            "states",
            "state_2",
            serde_json::json!({ "state_str": "B", "views": [field] }),
        );
        write(
            d,
            "events",
            "event_1",
            serde_json::json!({ "tag": "1", "event": { "event_type": "intent" }, "start_state": "X", "stop_state": "A" }),
        );
        write(
            d,
            "events",
            "event_2",
            serde_json::json!({ "tag": "2", "event": { "event_type": "click", "view": view("Settings", "settings", [[0, 0], [100, 100]]) }, "start_state": "A", "stop_state": "B" }),
        );
        write(
            d,
            "events",
            "event_3",
            serde_json::json!({ "tag": "3", "event": { "event_type": "set_text", "text": "Bob", "view": field }, "start_state": "B", "stop_state": "B" }),
        );
        write(
            d,
            "events",
            "event_4",
            serde_json::json!({ "tag": "4", "event": { "event_type": "key", "name": "BACK" }, "start_state": "B", "stop_state": "A" }),
        );
        // A restart, then an event from a screen that was never saved: no run across either.
        write(
            d,
            "events",
            "event_5",
            serde_json::json!({ "tag": "5", "event": { "event_type": "kill_app" }, "start_state": "A", "stop_state": "A" }),
        );
        write(
            d,
            "events",
            "event_6",
            serde_json::json!({ "tag": "6", "event": { "event_type": "click", "view": home_view() }, "start_state": "Z", "stop_state": "A" }),
        );
        let runs = read(d).unwrap();
        assert_eq!(runs.len(), 1, "{runs:?}");
        let steps = &runs[0].steps;
        assert_eq!(
            steps.iter().map(|s| s.action.clone()).collect::<Vec<_>>(),
            [
                RecordedAction::Tap(0),
                RecordedAction::Input(0, "Bob".into()),
                RecordedAction::Back,
                RecordedAction::Other
            ]
        );
        assert_eq!(
            (steps[0].title.as_str(), steps[0].widgets[0].id.as_str()),
            ("Settings", "settings")
        );
        assert_eq!(steps[1].widget().unwrap().widget_type, "EditText");
        assert!(read(&d.join("nothing")).is_err());
    }

    fn home_view() -> serde_json::Value {
        view("Settings", "settings", [[0, 0], [100, 100]])
    }

    #[test]
    fn reads_droidbots_recordings_in_the_development_folder() {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../../../../shared/data/droidtask-dev/user_tasks/calendar");
        if !dir.exists() {
            return;
        }
        let runs = read(&dir).unwrap();
        assert!(runs.len() >= 10, "{} runs", runs.len());
        let taps = runs
            .iter()
            .flat_map(|r| &r.steps)
            .filter(|s| matches!(s.action, RecordedAction::Tap(_)))
            .count();
        assert!(taps >= 100, "{taps} taps");
        assert!(runs.iter().flat_map(|r| &r.steps).all(|s| {
            s.widget()
                .is_none_or(|w| !w.text.is_empty() || !w.id.is_empty() || !w.bounds.is_empty())
        }));
    }
}
