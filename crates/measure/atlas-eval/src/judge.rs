//! Judging the graph's fast-path steps honestly: where the task's recording says what is right,
//! and where it cannot.
//!
//! A fast-path step is **judged** where the phone shows a recorded state for which the task's
//! recording has a step: right when it does the demonstration's action there. Elsewhere — on a
//! screen the recording has no step for, after a detour or on a screen the recording did not
//! keep — nothing says what is right, and the step is **unjudged**: it is reported with its
//! share, and compared with what the model alone did on that same screen of the same task (the
//! same widget, the same text, Back for Back, a finish for a finish). Counting every step that
//! is not the demonstration's as wrong, as the evaluation did before, calls a step wrong where
//! the demonstration cannot say, and where the step is exactly what the model alone did.

use std::collections::HashMap;

use atlas_action::Action;
use serde::Serialize;

use crate::task_run::{FastStep, TaskRun};

/// The fast-path steps of one run, judged where the recording can judge them.
pub(crate) fn fast_steps(
    chosen: &[(bool, Option<Action>)],
    screens: &[String],
    right: &[Option<bool>],
) -> Vec<FastStep> {
    chosen
        .iter()
        .enumerate()
        .filter(|(_, (by_graph, _))| *by_graph)
        .map(|(k, (_, action))| {
            let judged = right.get(k).copied().flatten();
            let back_again = screens
                .get(k + 2)
                .is_some_and(|s| Some(s) == screens.get(k));
            FastStep {
                step: k,
                screen: screens.get(k).cloned().unwrap_or_default(),
                action: action.clone(),
                judged,
                model_alone_agrees: None,
                undone: judged == Some(false) && back_again,
            }
        })
        .collect()
}

/// Whether two actions on one screen do the same: the same point (within a few thousandths of
/// the screen, as two taps on one widget's centre are), the same text, Back for Back, a finish
/// for a finish.
pub fn same_action(a: &Action, b: &Action) -> bool {
    let near = |p: &[u16; 2], q: &[u16; 2]| p[0].abs_diff(q[0]) <= 3 && p[1].abs_diff(q[1]) <= 3;
    match (a, b) {
        (Action::Back, Action::Back) | (Action::Finish { .. }, Action::Finish { .. }) => true,
        (Action::Tap { element: p, .. }, Action::Tap { element: q, .. })
        | (Action::LongPress { element: p }, Action::LongPress { element: q }) => near(p, q),
        (Action::Type { text: x } | Action::TypeName { text: x }, Action::Type { text: y })
        | (Action::Type { text: x } | Action::TypeName { text: x }, Action::TypeName { text: y }) => {
            x == y
        }
        _ => false,
    }
}

/// Compares each run's unjudged fast-path steps with what the model alone did on the same
/// screen of the same task and version (`alone_of` names a run's model-alone condition).
pub(crate) fn compare_with_model_alone(runs: &mut [TaskRun], alone_of: impl Fn(&TaskRun) -> &str) {
    let key =
        |run: &TaskRun, condition: &str| (run.app.clone(), run.task.clone(), condition.to_string());
    let alone: HashMap<(String, String, String), usize> = runs
        .iter()
        .enumerate()
        .filter(|(_, run)| run.model_steps.is_some())
        .map(|(i, run)| (key(run, &run.condition), i))
        .collect();
    for i in 0..runs.len() {
        let Some(&j) = alone.get(&key(&runs[i], alone_of(&runs[i]))) else {
            continue;
        };
        let mut fast = std::mem::take(&mut runs[i].fast);
        let steps = runs[j].model_steps.as_ref().map_or(&[][..], |m| &m.0);
        for fast in fast.iter_mut().filter(|f| f.judged.is_none()) {
            let mut there = steps.iter().filter(|(s, _)| *s == fast.screen).peekable();
            if there.peek().is_none() {
                continue;
            }
            let agrees = there.any(|(_, done)| match (done, &fast.action) {
                (Some(done), Some(taken)) => same_action(done, taken),
                _ => false,
            });
            fast.model_alone_agrees = Some(agrees);
        }
        runs[i].fast = fast;
    }
}

/// The judged and unjudged fast-path steps of some runs, added up.
#[derive(Debug, Clone, Copy, Default, Serialize)]
pub struct Judged {
    /// Fast-path steps the recording judges.
    pub judged: usize,
    /// Of those, steps that are not the demonstration's action there.
    pub judged_wrong: usize,
    /// Fast-path steps on screens the recording has no step for.
    pub unjudged: usize,
    /// Of those, steps on a screen the model alone also stood on.
    pub unjudged_compared: usize,
    /// Of those, steps that did what the model alone did there.
    pub unjudged_agreeing: usize,
    /// Judged wrong steps not undone within one step.
    pub wrong_not_undone: usize,
}

impl Judged {
    /// Adds a run's fast-path steps.
    pub fn add(&mut self, steps: &[FastStep]) {
        for s in steps {
            match s.judged {
                Some(right) => {
                    self.judged += 1;
                    self.judged_wrong += usize::from(!right);
                    self.wrong_not_undone += usize::from(!right && !s.undone);
                }
                None => {
                    self.unjudged += 1;
                    if let Some(agrees) = s.model_alone_agrees {
                        self.unjudged_compared += 1;
                        self.unjudged_agreeing += usize::from(agrees);
                    }
                }
            }
        }
    }

    /// Judged precision: the judged steps that were right (none judged: none).
    pub fn precision(&self) -> Option<f64> {
        (self.judged > 0).then(|| 1.0 - self.judged_wrong as f64 / self.judged as f64)
    }

    /// The share of fast-path steps the recording cannot judge.
    pub fn unjudged_share(&self) -> Option<f64> {
        let all = self.judged + self.unjudged;
        (all > 0).then(|| self.unjudged as f64 / all as f64)
    }

    /// Of the unjudged steps the model alone also stood on, the share it agreed with.
    pub fn agreement(&self) -> Option<f64> {
        (self.unjudged_compared > 0)
            .then(|| self.unjudged_agreeing as f64 / self.unjudged_compared as f64)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tap(x: u16, y: u16) -> Option<Action> {
        Some(Action::Tap {
            element: [x, y],
            message: None,
        })
    }

    #[test]
    fn a_step_is_judged_only_where_the_recording_has_one_and_undone_steps_are_seen() {
        let chosen = [
            (true, tap(10, 10)),
            (false, Some(Action::Back)),
            (true, tap(5, 5)),
        ];
        let screens = ["a", "b", "a", "c"].map(String::from);
        let right = [Some(false), None, None];
        let steps = fast_steps(&chosen, &screens, &right);
        assert_eq!(steps.len(), 2);
        assert_eq!(steps[0].judged, Some(false));
        assert!(
            steps[0].undone,
            "back on the screen it was taken on one step later"
        );
        assert_eq!(steps[1].judged, None);
        let mut total = Judged::default();
        total.add(&steps);
        assert_eq!(
            (total.judged, total.judged_wrong, total.unjudged),
            (1, 1, 1)
        );
        assert_eq!(total.wrong_not_undone, 0);
        assert_eq!(total.precision(), Some(0.0));
        assert_eq!(total.unjudged_share(), Some(0.5));
    }

    #[test]
    fn the_same_action_is_the_same_widget_text_back_or_finish() {
        assert!(same_action(
            &tap(500, 300).unwrap(),
            &tap(502, 301).unwrap()
        ));
        assert!(!same_action(
            &tap(500, 300).unwrap(),
            &tap(520, 300).unwrap()
        ));
        assert!(same_action(&Action::Back, &Action::Back));
        assert!(!same_action(&Action::Back, &tap(1, 1).unwrap()));
        let typed = |t: &str| Action::Type { text: t.into() };
        assert!(same_action(&typed("牛奶"), &typed("牛奶")));
        assert!(!same_action(&typed("牛奶"), &typed("milk")));
    }
}
