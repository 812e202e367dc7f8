//! An app as Atlas's graph knows it, played as a phone: each page a screen, each transition a
//! tap (or typing, or Back) on the widget it names.
//!
//! A graph keeps less than a recording: widgets may have no bounds (seed 000's reports rarely
//! give them), and a transition may name a widget the page's list lacks. So a page's screen is
//! its title, then its widgets where they were, then the rest — and a button for every action
//! that leaves the page — laid out in a column, so every known way on is something to tap.

use std::collections::HashMap;

use atlas_model::{Action, Transition, Widget};
use atlas_store::AppData;

use crate::app::{RecordedApp, Screen, Trigger, View};

/// The screen of a phone playing a graph: a common 1080×2400 display.
const WIDTH: i64 = 1080;
const HEIGHT: i64 = 2400;
/// Where the page's title sits, under the status bar, and where the column of widgets starts.
const TITLE: [[i64; 2]; 2] = [[0, 80], [WIDTH, 220]];
const COLUMN_TOP: i64 = 260;

impl RecordedApp {
    /// A phone's view of an app of Atlas's graph. The app starts on its home page.
    pub fn from_graph(data: &AppData) -> Result<RecordedApp, crate::SimError> {
        let app_id = &data.app.app_id;
        if data.pages.is_empty() {
            return Err(crate::SimError::NoPages(app_id.to_string()));
        }
        let package = app_id.clone();
        let mut leaving: HashMap<&str, Vec<&Transition>> = HashMap::new();
        for t in &data.transitions {
            leaving.entry(t.from_page.as_str()).or_default().push(t);
        }
        let mut screens = HashMap::new();
        let mut transitions: HashMap<(String, Trigger), (String, f64)> = HashMap::new();
        for page in &data.pages {
            let out = leaving.get(page.page_id.as_str()).map_or(&[][..], |v| v);
            let views = page_views(&package, &page.page_name, &page.widgets, out);
            for t in out {
                let Some(trigger) = trigger(&views, t) else {
                    continue;
                };
                // Two edges on one trigger: the phone takes the one agents succeeded with most.
                let rate = (t.success_count as f64 + 1.0)
                    / ((t.success_count + t.fail_count) as f64 + 2.0);
                // Typing follows the edge of its text, else the best typing edge of the field.
                let mut keys = vec![trigger.clone()];
                if let Trigger::Type(bounds, text) = &trigger
                    && !text.is_empty()
                {
                    keys.push(Trigger::Type(*bounds, String::new()));
                }
                for trigger in keys {
                    let key = (page.page_id.clone(), trigger);
                    if transitions.get(&key).is_none_or(|(_, best)| rate > *best) {
                        transitions.insert(key, (t.to_page.clone(), rate));
                    }
                }
            }
            screens.insert(
                page.page_id.clone(),
                Screen {
                    state_str: page.page_id.clone(),
                    name: Some(page.page_name.clone()),
                    foreground_activity: format!("{package}/.MainActivity"),
                    width: WIDTH as u32,
                    height: HEIGHT as u32,
                    views,
                },
            );
        }
        let launch = data
            .app
            .home_page
            .clone()
            .filter(|id| screens.contains_key(id))
            .or_else(|| {
                data.pages
                    .iter()
                    .min_by_key(|p| p.ordinal)
                    .map(|p| p.page_id.clone())
            })
            .expect("an app with pages");
        Ok(RecordedApp {
            version: Default::default(),
            package,
            screens,
            transitions: transitions
                .into_iter()
                .filter(|(_, (to, _))| data.pages.iter().any(|p| &p.page_id == to))
                .map(|(k, (to, _))| (k, to))
                .collect(),
            starts: vec![launch.clone()],
            launch,
            home: None,
        })
    }
}

/// The title (unless a widget shows it already), then the page's widgets, then a button for
/// each way on the widgets lack.
fn page_views(
    package: &str,
    title: &str,
    widgets: &[Widget],
    leaving: &[&Transition],
) -> Vec<View> {
    let mut views = Vec::new();
    if !widgets.iter().any(|w| w.text == title) {
        views.push(View {
            class: Some("android.widget.TextView".into()),
            text: Some(title.to_string()),
            bounds: Some(TITLE),
            package: Some(package.to_string()),
            ..View::default()
        });
    }
    let mut shown: Vec<Widget> = widgets.to_vec();
    for t in leaving {
        let a = &t.action;
        let known = shown.iter().any(|w| names(a, &w.id, &w.text));
        if a.action_type == "back" || a.widget_key().is_empty() || known {
            continue;
        }
        let input = matches!(a.action_type.as_str(), "input" | "type");
        shown.push(Widget {
            id: a.widget_id.clone(),
            text: if input {
                String::new()
            } else {
                a.widget_text.clone()
            },
            widget_type: if input { "EditText" } else { "Button" }.into(),
            ..Widget::default()
        });
    }
    let unplaced = shown.iter().filter(|w| parse_bounds(w).is_none()).count() as i64;
    // A column that fits the screen: rows of 170 pixels, thinner when there are many.
    let row = ((HEIGHT - COLUMN_TOP) / unplaced.max(1)).min(170);
    let mut next_top = if views.is_empty() {
        TITLE[0][1]
    } else {
        COLUMN_TOP
    };
    for w in &shown {
        let bounds = parse_bounds(w).unwrap_or_else(|| {
            let top = next_top;
            next_top += row;
            [[60, top], [WIDTH - 60, top + row - 20]]
        });
        let class = android_class(&w.widget_type, w.is_text_field());
        // What an agent may act on: a control, or any widget some transition starts from.
        let used = leaving.iter().any(|t| names(&t.action, &w.id, &w.text));
        let control = !matches!(
            class.as_str(),
            "android.widget.TextView" | "android.widget.ImageView"
        );
        views.push(View {
            resource_id: (!w.id.is_empty()).then(|| w.id.clone()),
            text: (!w.text.is_empty()).then(|| w.text.clone()),
            bounds: Some(bounds),
            clickable: control || used,
            editable: w.is_text_field(),
            checkable: w.checked.is_some(),
            checked: w.checked.unwrap_or(false),
            package: Some(package.to_string()),
            class: Some(class),
            ..View::default()
        });
    }
    views
}

/// The Android class of a widget type as reports name it (`button`, `input`, `text`, or a class).
fn android_class(widget_type: &str, text_field: bool) -> String {
    let kind = widget_type.to_ascii_lowercase();
    let class = if kind.contains('.') {
        return widget_type.to_string();
    } else if text_field {
        "EditText"
    } else if kind.contains("check") {
        "CheckBox"
    } else if kind.contains("switch") {
        "Switch"
    } else if kind.contains("image") || kind == "icon" {
        "ImageView"
    } else if kind == "text" || kind.contains("label") || kind == "textview" {
        "TextView"
    } else {
        "Button"
    };
    format!("android.widget.{class}")
}

/// What moves the phone along a transition: its widget tapped or typed into, or Back. Swipes
/// and other gestures move nothing (the screen stays, as for a tap nobody recorded).
fn trigger(views: &[View], t: &Transition) -> Option<Trigger> {
    let a = &t.action;
    if a.action_type == "back" {
        return Some(Trigger::Key("BACK".into()));
    }
    let view = views.iter().find(|v| {
        names(
            a,
            v.resource_id.as_deref().unwrap_or(""),
            v.text.as_deref().unwrap_or(""),
        )
    })?;
    let bounds = view.bounds?;
    match a.action_type.as_str() {
        "click" | "tap" | "long_click" | "long_press" | "select" | "check" => {
            Some(Trigger::Tap(bounds))
        }
        // Typing any text follows an edge that recorded none.
        "input" | "type" => Some(Trigger::Type(bounds, a.input_text.clone())),
        _ => None,
    }
}

/// Whether an action names the widget with this id and text: by id when both have one, else
/// by text (reports often give only the text a person sees).
fn names(action: &Action, id: &str, text: &str) -> bool {
    if !action.widget_id.is_empty() && !id.is_empty() {
        action.widget_id == id
    } else {
        !action.widget_text.is_empty() && action.widget_text == text
    }
}

/// A widget's box as the simulator keeps views' bounds.
fn parse_bounds(widget: &Widget) -> Option<[[i64; 2]; 2]> {
    widget.rect().map(|[l, t, r, b]| [[l, t], [r, b]])
}
