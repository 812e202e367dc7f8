//! DroidBot's saved screens and events as types: each view of a screen (`states/*.json`) and
//! each event with the screens it started and stopped on (`events/*.json`), the format DroidBot
//! and HMDroidbot write and DroidTask ships.
//!
//! Key design decision: **the format apart from its readers.** The importer (`atlas-import`)
//! reads a folder of these files into traces, and the simulated phone (`atlas-device-sim`)
//! replays the same files as a phone; both read the files through these types, and neither
//! depends on the other. No I/O here: callers hand in what they read.

use atlas_model::Widget;
use serde::Deserialize;

/// A view of a saved screen, as DroidBot writes it (the uiautomator dump's attributes).
#[derive(Debug, Deserialize, Clone, Default)]
pub struct View {
    /// The view's text.
    #[serde(default)]
    pub text: Option<String>,
    /// Its content description.
    #[serde(default)]
    pub content_description: Option<String>,
    /// Its resource id (`com.app:id/title`).
    #[serde(default)]
    pub resource_id: Option<String>,
    /// Its class (`android.widget.Button`).
    #[serde(default)]
    pub class: Option<String>,
    /// Its bounds: [[left, top], [right, bottom]] in pixels.
    #[serde(default)]
    pub bounds: Option<[[i64; 2]; 2]>,
    /// It takes taps.
    #[serde(default)]
    pub clickable: bool,
    /// It can be checked.
    #[serde(default)]
    pub checkable: bool,
    /// It is checked.
    #[serde(default)]
    pub checked: bool,
    /// It is selected.
    #[serde(default)]
    pub selected: bool,
    /// It takes text.
    #[serde(default)]
    pub editable: bool,
    /// It had the input focus when the screen was saved.
    #[serde(default)]
    pub focused: bool,
    /// It is a password field (its text shown as dots).
    #[serde(default)]
    pub is_password: bool,
    /// It takes long presses.
    #[serde(default)]
    pub long_clickable: bool,
    /// It scrolls.
    #[serde(default)]
    pub scrollable: bool,
    /// Whether it is visible, when the dump says.
    #[serde(default)]
    pub visible: Option<bool>,
    /// The package it belongs to.
    #[serde(default)]
    pub package: Option<String>,
    /// The index of the view it is inside, in the screen's list of views (DroidBot writes -1,
    /// or nothing, for the root).
    #[serde(default)]
    pub parent: Option<i64>,
}

/// One `events/*.json` file: the event and the screens it started and stopped on.
#[derive(Debug, Deserialize)]
pub struct EventFile {
    /// The file's tag (its time).
    #[serde(default)]
    pub tag: String,
    /// The event.
    pub event: Event,
    /// The screen it started on (`state_str`).
    #[serde(default)]
    pub start_state: Option<String>,
    /// The screen it ended on.
    #[serde(default)]
    pub stop_state: Option<String>,
}

/// What DroidBot did: `click`/`touch` or `set_text` on a view, a `key`, an `intent`, ...
#[derive(Debug, Deserialize)]
pub struct Event {
    /// `click`, `touch`, `set_text`, `key`, `intent`, …
    pub event_type: String,
    /// The view acted on, if any.
    #[serde(default)]
    pub view: Option<View>,
    /// The text set, for `set_text`.
    #[serde(default)]
    pub text: Option<String>,
    /// The key's name, for `key` (`BACK`).
    #[serde(default)]
    pub name: Option<String>,
}

impl View {
    /// Whether the point is inside the view's box.
    pub fn contains(&self, x: i64, y: i64) -> bool {
        self.bounds
            .is_some_and(|[[l, t], [r, b]]| x >= l && x < r && y >= t && y < b)
    }

    /// The view's area in pixels (unbounded views count as the largest).
    pub fn area(&self) -> i64 {
        self.bounds
            .map_or(i64::MAX, |[[l, t], [r, b]]| (r - l).max(0) * (b - t).max(0))
    }

    /// What a person reads on the view: its text, else its content description.
    pub fn label(&self) -> &str {
        let text = self.text.as_deref().unwrap_or_default().trim();
        if text.is_empty() {
            self.content_description
                .as_deref()
                .unwrap_or_default()
                .trim()
        } else {
            text
        }
    }

    /// Its bounds as uiautomator writes them (`[l,t][r,b]`); empty when it has none.
    pub fn bounds(&self) -> String {
        self.bounds
            .map(|[[l, t], [r, b]]| format!("[{l},{t}][{r},{b}]"))
            .unwrap_or_default()
    }

    /// Its resource id without its package (`com.app:id/title` → `title`); empty when none.
    pub fn short_id(&self) -> &str {
        self.resource_id
            .as_deref()
            .map(|id| id.rsplit_once(":id/").map_or(id, |(_, n)| n))
            .unwrap_or_default()
    }

    /// Whether a person sees the view: DroidBot also dumps the views Android keeps off the
    /// screen (a pager's other pages), marked not visible, which `uiautomator dump` leaves out.
    pub fn is_shown(&self) -> bool {
        self.visible != Some(false)
    }

    /// The widget an agent would send, if a person could see or use this view.
    pub fn widget(&self) -> Option<Widget> {
        if !self.is_shown() {
            return None;
        }
        let actionable = self.clickable || self.checkable || self.editable || self.long_clickable;
        let label = self.label();
        (!label.is_empty() || actionable).then(|| Widget {
            id: self.short_id().to_string(),
            text: label.to_string(),
            widget_type: self
                .class
                .as_deref()
                .map(|c| c.rsplit('.').next().unwrap_or(c))
                .unwrap_or_default()
                .to_string(),
            bounds: self.bounds(),
            checked: (self.checkable || self.checked || self.selected)
                .then_some(self.checked || self.selected),
            seen: 0,
        })
    }
}
