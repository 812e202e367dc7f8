//! Checking the graph's answers against what happened next, for the app's record of trust.
//!
//! An answer sure enough for the fast path ([`Offered`]) is checked on the next screen whether or
//! not the agent took it: where the model was asked, its own choice on that screen is the check
//! (the same widget tapped, the same text typed, Back for Back, a finish for a finish) — though a
//! held answer the model went against only marks its way, since the graph never acted on it; where
//! the graph's step was taken, the screen must show that it did something, and the step waits one
//! screen more ([`Carry::unjudged`]) — a model that answers it with Back undid it. A step that
//! changed the screen to another page than its way expected *parted* from the way: the way is
//! doubted from there, but the step is not wrong unless it is undone. Every check of a remembered
//! way's step names the way and the step, which makes the way's own record. No model call is spent
//! on checking: every check is read off steps the agent takes anyway.
//!
//! [`Carry::unjudged`]: crate::Carry::unjudged

use atlas_action::Action;
use atlas_model::{Check, Point, Widget};

use crate::hit_test::widget_at;
use atlas_api::screen::{Executed, Offered};

/// The screen an executed action led to (none when the run ended with it).
pub(crate) struct After<'a> {
    /// The page it was taken for (empty when none).
    pub page: &'a str,
    /// Its widgets.
    pub widgets: &'a [Widget],
    /// The action tapped a text field: it readied typing, and may leave the screen as it was.
    pub readied: bool,
}

/// The checks `executed` settles: the graph's step on the screen before (`unjudged`), and the
/// answer `offered` on the screen it ran on (with that screen's widgets). A graph step that
/// arrived where its edge leads is put in `waiting`, for what is done after it to settle.
pub(crate) fn judge(
    offered: Option<(&Offered, &[Widget])>,
    unjudged: Option<Check>,
    executed: &Executed,
    after: Option<After<'_>>,
    waiting: &mut Option<Check>,
) -> Vec<Check> {
    let done = &executed.action;
    let mut checks = Vec::new();
    if let Some(step) = unjudged {
        let undone = !executed.by_graph && matches!(done, Action::Back);
        checks.push(Check {
            right: step.right && !undone,
            at: atlas_model::now_ms(),
            ..step
        });
    }
    let Some((offered, before)) = offered else {
        return checks;
    };
    if executed.by_graph {
        // The graph's own step: the next screen checks it, and the step after may undo it. A
        // finish the graph took ends the run: nothing is left to check it.
        let Some(after) = after else {
            return checks;
        };
        let arrived = !after.page.is_empty()
            && (offered.expected_page.is_empty() || offered.expected_page == after.page);
        // A step passes only where the screen shows that it did something: another screen, or
        // this one showing a new state (a switch set, a row chosen), or a field readied for
        // typing. One that changed nothing is wrong — unless its way expected it to stay on its
        // page (a choice the dump may not show): then it proves nothing either way, and is no
        // check at all. One that changed the screen but not to where its way expected parted
        // from the way (the app may have changed under it), and is wrong only if what is done
        // next undoes it.
        let changed = after.readied || before != after.widgets;
        let stays = !offered.expected_page.is_empty() && offered.expected_page == offered.page;
        if !changed && stays {
            return checks;
        }
        let step = Check {
            parted: changed && !arrived,
            ..offered_check(offered, changed)
        };
        if step.right {
            *waiting = Some(step);
        } else {
            checks.push(step);
        }
        return checks;
    }
    if let Some(right) = agrees(offered, done, before) {
        // A held answer the model went against was never the graph's to take: it marks its way
        // (parted), and is no check of the app's record, right or wrong (`declined`). Only
        // answers the model agreed with close a breaker or lift a doubt.
        let declined = !right && offered.held;
        checks.push(Check {
            parted: declined,
            declined,
            ..offered_check(offered, right)
        });
    }
    checks
}

/// A check of the answer `offered`, made now.
fn offered_check(offered: &Offered, right: bool) -> Check {
    Check {
        way: offered.way.clone(),
        step: offered.step,
        ..Check::now(offered.kind, right, &offered.page)
    }
}

/// Whether the model's action `done` is the graph's answer on the screen of `widgets`; `None`
/// where it says nothing either way (a wait, a note, a lookup; the tap that focuses the field
/// the graph would type into).
fn agrees(offered: &Offered, done: &Action, widgets: &[Widget]) -> Option<bool> {
    let [width, height] = offered.screen;
    let graph = &offered.action;
    let on_widget = |element: &[u16; 2]| {
        Point::from_relative(element[0].into(), element[1].into(), width, height)
            .and_then(|p| widget_at(widgets, (p.x.into(), p.y.into())))
    };
    let same_widget = |a: &[u16; 2], b: &[u16; 2]| match (on_widget(a), on_widget(b)) {
        (Some(x), Some(y)) => x == y,
        _ => a == b,
    };
    Some(match (graph, done) {
        (
            _,
            Action::Wait { .. }
            | Action::Note { .. }
            | Action::TakeOver { .. }
            | Action::Interact
            | Action::CallApi { .. }
            | Action::GetKnowledgeData { .. },
        ) => return None,
        (Action::Back, Action::Back) => true,
        (Action::Finish { .. }, Action::Finish { .. }) => true,
        (Action::Tap { element: a, .. }, Action::Tap { element: b, .. })
        | (Action::LongPress { element: a }, Action::LongPress { element: b }) => same_widget(a, b),
        (Action::Type { text: a }, Action::Type { text: b } | Action::TypeName { text: b }) => {
            a == b
        }
        // A model types into a field by tapping it first: the tap is the typing's first half.
        (Action::Type { .. }, Action::Tap { element, .. }) => {
            let field = offered
                .focus
                .and_then(|[x, y]| widget_at(widgets, (x.into(), y.into())));
            if field.is_some() && field == on_widget(element) {
                return None;
            }
            false
        }
        _ => false,
    })
}
