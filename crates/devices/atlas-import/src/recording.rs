//! The one shape every reader produces: a recorded run as the screens seen (their widgets) and
//! what was done on each.

use atlas_model::Widget;

/// What was done on a screen.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RecordedAction {
    /// A tap on `widgets[i]`.
    Tap(usize),
    /// Text typed into `widgets[i]`.
    Input(usize, String),
    /// A tap on a view known only by its id, not shown among the screen's widgets (DroidBot's
    /// `utg.js` names the views its events touched by a hash of their signature, not by label).
    TapView(String),
    /// The Back key.
    Back,
    /// The task is done on this screen.
    Finish,
    /// Nothing an agent could repeat (an app launch, a restart); the run breaks here.
    Other,
}

/// One screen of a run and what was done on it.
#[derive(Debug, Clone, PartialEq)]
pub struct RecordedStep {
    /// A short name a person would give the screen (its first text).
    pub title: String,
    /// The screen's widgets.
    pub widgets: Vec<Widget>,
    /// What was done on it.
    pub action: RecordedAction,
}

impl RecordedStep {
    /// The widget acted on, if any.
    pub fn widget(&self) -> Option<&Widget> {
        match &self.action {
            RecordedAction::Tap(i) | RecordedAction::Input(i, _) => self.widgets.get(*i),
            _ => None,
        }
    }
}

/// A recorded run: an exploration, or a person doing one task.
#[derive(Debug, Clone, PartialEq)]
pub struct Recording {
    /// The run's name.
    pub name: String,
    /// The instruction, for a task.
    pub task: Option<String>,
    /// Its steps, in order.
    pub steps: Vec<RecordedStep>,
}
