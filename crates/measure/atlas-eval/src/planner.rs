//! The ideal planner of `atlas eval agent --plan`: a scripted model that answers a plan request
//! only by choosing among the routes the request lists. It takes the listed route whose steps the
//! recording does next, as many of them as match, and never answers with an action the request
//! did not offer; `none` when no listed route begins with the recording's next step.
//!
//! It knows the recording as the ideal screen model does: a route's step matches when, on the
//! recorded screen of that step, the widget the step names (by id, else by text; one widget, or
//! it does not match) is where the person tapped or typed, or both are Back.

use std::sync::{Arc, Mutex};

use atlas_device_sim::{Phone, RecordedApp};
use atlas_llm::{Completion, Model, ModelError};
use atlas_model::Widget;
use serde::Deserialize;
use serde_json::Value;

use crate::truth::{GroundTruth, IdealProgress, Truth, step_at};

/// A route as the request lists it.
#[derive(Debug, Deserialize)]
struct Listed {
    route: usize,
    steps: Vec<ListedStep>,
}

#[derive(Debug, Deserialize)]
struct ListedStep {
    action_type: String,
    #[serde(default)]
    widget_id: String,
    #[serde(default)]
    widget_text: String,
    #[serde(default)]
    input_text: String,
}

/// See the module's documentation.
pub(crate) struct IdealPlanner {
    pub(crate) phone: Arc<Mutex<Phone>>,
    pub(crate) app: RecordedApp,
    pub(crate) task: GroundTruth,
    /// The ideal screen model's progress through the task's steps (shared with it).
    pub(crate) progress: Arc<Mutex<IdealProgress>>,
}

impl Model for IdealPlanner {
    fn name(&self) -> String {
        "ideal planner (ground truth)".into()
    }

    fn complete(
        &self,
        request: &Value,
        on_delta: &mut dyn FnMut(&str),
    ) -> Result<Completion, ModelError> {
        let prompt = request["messages"]
            .as_array()
            .and_then(|m| m.last())
            .and_then(|m| m["content"].as_str())
            .unwrap_or_default();
        let content = self.choose(&listed_routes(prompt));
        on_delta(&content);
        Ok(Completion {
            content,
            attempts: 1,
            ..Completion::default()
        })
    }
}

impl IdealPlanner {
    fn choose(&self, routes: &[Listed]) -> String {
        let screen = self
            .phone
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .current()
            .to_string();
        let from = self.progress.lock().unwrap_or_else(|e| e.into_inner()).from;
        let Some(at) = step_at(&self.task, &screen, from) else {
            return "none".into();
        };
        let best = routes
            .iter()
            .map(|r| (self.matching(r, at, &screen), r))
            .filter(|(k, _)| *k > 0)
            // The most steps matched; the first listed among equals.
            .max_by(|a, b| a.0.cmp(&b.0).then(b.1.route.cmp(&a.1.route)));
        match best {
            Some((k, r)) if k == r.steps.len() => format!("route {}", r.route),
            Some((k, r)) => format!("route {} steps {k}", r.route),
            None => "none".into(),
        }
    }

    /// How many of the route's first steps the recording does next, from step `at` on `screen`.
    fn matching(&self, route: &Listed, at: usize, screen: &str) -> usize {
        let mut matched = 0;
        for (j, step) in route.steps.iter().enumerate() {
            let Some((screens, truth)) = self.task.steps.get(at + j) else {
                break;
            };
            let shown = if j == 0 {
                Some(screen)
            } else {
                screens
                    .iter()
                    .map(String::as_str)
                    .find(|s| self.app.screens.contains_key(*s))
            };
            let Some(recorded) = shown.and_then(|s| self.app.screens.get(s)) else {
                break;
            };
            let widgets: Vec<Widget> = recorded.views.iter().filter_map(|v| v.widget()).collect();
            if !does(step, truth, &widgets) {
                break;
            }
            matched += 1;
        }
        matched
    }
}

/// The routes a plan request lists (its `Routes as JSON:` line).
fn listed_routes(prompt: &str) -> Vec<Listed> {
    prompt
        .lines()
        .find_map(|l| l.strip_prefix("Routes as JSON: "))
        .and_then(|json| serde_json::from_str(json).ok())
        .unwrap_or_default()
}

/// Whether a route's step does what the person did.
fn does(step: &ListedStep, truth: &Truth, widgets: &[Widget]) -> bool {
    let inside = |b: &[[i64; 2]; 2]| {
        the_widget(step, widgets)
            .is_some_and(|[x, y]| x >= b[0][0] && x < b[1][0] && y >= b[0][1] && y < b[1][1])
    };
    match truth {
        Truth::Back => step.action_type == "back",
        Truth::Finish => false,
        Truth::Type(b, text) => {
            step.action_type == "input" && step.input_text == *text && inside(b)
        }
        Truth::Tap(b) => !matches!(step.action_type.as_str(), "back" | "input") && inside(b),
    }
}

/// The centre of the one widget a step names, as `observe_screen` resolves it
/// ([`Widget::named`]).
fn the_widget(step: &ListedStep, widgets: &[Widget]) -> Option<[i64; 2]> {
    let (_, [l, t, r, b]) = Widget::named(widgets, &step.widget_id, &step.widget_text)?;
    Some([(l + r) / 2, (t + b) / 2])
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    use atlas_device_sim::app::Screen;
    use serde_json::json;

    fn screen(id: &str, views: Value) -> Screen {
        serde_json::from_value(
            json!({"state_str": id, "width": 1080, "height": 2400, "views": views}),
        )
        .unwrap()
    }

    fn button(text: &str, bounds: [[i64; 2]; 2]) -> Value {
        json!({"text": text, "class": "android.widget.Button", "bounds": bounds, "clickable": true})
    }

    /// Settings on the list, then Dark mode on the settings, then done.
    fn planner() -> IdealPlanner {
        let list = screen(
            "list",
            json!([
                button("Settings", [[800, 0], [1080, 200]]),
                button("Other", [[0, 300], [1080, 500]])
            ]),
        );
        let settings = screen(
            "settings",
            json!([button("Dark mode", [[0, 300], [1080, 500]])]),
        );
        let app = RecordedApp {
            version: Default::default(),
            package: "notes".into(),
            screens: HashMap::from([("list".into(), list), ("settings".into(), settings)]),
            transitions: HashMap::new(),
            launch: "list".into(),
            starts: vec!["list".into()],
            home: None,
        };
        let task = GroundTruth {
            name: "task1".into(),
            instruction: "turn on dark mode".into(),
            steps: vec![
                (vec!["list".into()], Truth::Tap([[800, 0], [1080, 200]])),
                (vec!["settings".into()], Truth::Tap([[0, 300], [1080, 500]])),
                (vec!["settings".into()], Truth::Finish),
            ],
        };
        IdealPlanner {
            phone: Arc::new(Mutex::new(Phone::new(app.clone(), Some("list")).unwrap())),
            app,
            task,
            progress: Arc::new(Mutex::new(Default::default())),
        }
    }

    fn ask(planner: &IdealPlanner, routes: Value) -> String {
        let prompt = format!("Task / 任务: x\nRoutes as JSON: {routes}\nAnswer with one line.");
        let request = json!({"messages": [{"role": "system", "content": "plan"}, {"role": "user", "content": prompt}]});
        planner.complete(&request, &mut |_| {}).unwrap().content
    }

    fn click(text: &str) -> Value {
        json!({"action_type": "click", "widget_id": "", "widget_text": text, "input_text": ""})
    }

    #[test]
    fn the_ideal_planner_takes_the_listed_route_the_recording_walks_as_far_as_it_matches() {
        let p = planner();
        let routes = json!([
            {"route": 1, "steps": [click("Other")]},
            {"route": 2, "steps": [click("Settings"), click("Dark mode"), click("Theme")]},
            {"route": 3, "steps": [click("Settings")]},
        ]);
        // Route 2's first two steps are the recording's next two; its third is not (the task
        // ends there).
        assert_eq!(ask(&p, routes), "route 2 steps 2");
        let whole = json!([{"route": 4, "steps": [click("Settings"), click("Dark mode")]}]);
        assert_eq!(ask(&p, whole), "route 4");
        // Nothing listed begins with the next step, or nothing is listed at all: none.
        assert_eq!(
            ask(&p, json!([{"route": 1, "steps": [click("Other")]}])),
            "none"
        );
        assert_eq!(ask(&p, json!([])), "none");
        let back = json!([{"route": 1, "steps": [{"action_type": "back"}]}]);
        assert_eq!(ask(&p, back), "none");
    }
}
