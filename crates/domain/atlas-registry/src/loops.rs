//! No loop on the fast path: the steps a run took, each with the exact screen it was taken on
//! ([`atlas_model::screen_step`]), travel in its [`Carry`]; the graph never takes a step again on
//! a screen where the run took it before. On a deterministic app the same step on the same screen
//! does the same again, so a second time is no progress — a radio button tapped sixteen times,
//! each "passing", until the step budget ran out. The model gets the screen instead.
//!
//! A step on a screen that shows something new (a counter one higher, a row added) is another
//! step: "+" tapped twice is no loop. So is a remembered way's later step that does what an
//! earlier step of the same way did on the same screen (a person who deleted two items the same
//! way): the run has moved on along the way — if it left the page since, and not by a Back. A
//! Back undoes what the steps before it opened, so a screen met again after one is the screen as
//! it was, and the same step there goes round (a dialog opened and dismissed, then opened again:
//! a way remembered from a run that did so). Steps that never left the page and brought its
//! screen back as it was undid each other there (a box ticked and unticked): the same step again
//! goes round too. What never passes is the same step of a way again, or the step of another
//! way, or of the labels, that the run took before on this screen.

use atlas_action::Action;
use atlas_model::{Point, Widget};

use crate::hit_test::widget_at;
use atlas_api::screen::{Carry, StepTaken};

/// The most steps a carry remembers: far more than any run's step budget, so a client that
/// never ends a run cannot grow its carry without end.
const MOST_REMEMBERED: usize = 500;

/// The key of `action` on the screen of `widgets` (`size` in pixels): a tap or long press by the
/// widget it hits (anywhere on the same widget is the same step), typing by its text, the rest by
/// what they are.
pub(crate) fn step_key(widgets: &[Widget], action: &Action, size: (u32, u32)) -> String {
    let hit = |element: &[u16; 2]| {
        Point::from_relative(element[0].into(), element[1].into(), size.0, size.1)
            .and_then(|p| widget_at(widgets, (p.x.into(), p.y.into())))
            .and_then(|w| widgets.iter().position(|x| std::ptr::eq(x, w)))
            .map_or_else(|| format!("{element:?}"), |i| format!("widget {i}"))
    };
    let step = match action {
        Action::Tap { element, .. } => format!("tap {}", hit(element)),
        Action::LongPress { element } => format!("long press {}", hit(element)),
        Action::DoubleTap { element } => format!("double tap {}", hit(element)),
        other => serde_json::to_string(other).unwrap_or_default(),
    };
    atlas_model::screen_step(widgets, &step)
}

/// A remembered way's step, as its key and its index.
pub(crate) type WayStep<'a> = (&'a str, u32);

/// Notes that the run took `action` on the carried screen (as step `way` of a remembered way,
/// when the graph took it so).
pub(crate) fn remember(carry: &mut Carry, action: &Action, size: (u32, u32), way: Option<WayStep>) {
    let (way, step) = way.map_or((String::new(), 0), |(way, step)| (way.to_owned(), step));
    if carry.steps_taken.len() >= MOST_REMEMBERED {
        carry.steps_taken.remove(0);
    }
    carry.steps_taken.push(StepTaken {
        on_screen: step_key(&carry.widgets, action, size),
        way,
        step,
        back: matches!(action, Action::Back),
        page: carry.page_id.clone(),
    });
}

/// Whether the run took `action` on a screen exactly like `widgets` before — unless it is `way`'s
/// step and the run took it there only as an earlier step of the same way, and left its page
/// since, by no Back.
pub(crate) fn repeats(
    carry: &Carry,
    widgets: &[Widget],
    action: &Action,
    size: (u32, u32),
    way: Option<WayStep>,
) -> bool {
    let key = step_key(widgets, action, size);
    let taken = &carry.steps_taken;
    taken.iter().enumerate().any(|(i, earlier)| {
        earlier.on_screen == key
            && match way {
                Some((way, step)) if !earlier.way.is_empty() => {
                    let since = &taken[i + 1..];
                    earlier.way != way
                        || earlier.step >= step
                        || since.iter().any(|s| s.back)
                        || since.iter().all(|s| s.page == earlier.page)
                }
                _ => true,
            }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn widget(text: &str, bounds: &str, checked: Option<bool>) -> Widget {
        Widget {
            text: text.into(),
            bounds: bounds.into(),
            checked,
            ..Widget::default()
        }
    }

    fn tap(x: u16, y: u16) -> Action {
        Action::Tap {
            element: [x, y],
            message: None,
        }
    }

    #[test]
    fn the_same_step_on_the_same_screen_repeats_and_a_new_state_does_not() {
        let size = (1000, 1000);
        let screen = vec![
            widget("First name", "[0,0][1000,100]", Some(false)),
            widget("Last name", "[0,100][1000,200]", Some(false)),
        ];
        let mut carry = Carry {
            widgets: screen.clone(),
            ..Carry::default()
        };
        remember(&mut carry, &tap(500, 50), size, None);
        // Anywhere on the same widget is the same step.
        assert!(repeats(&carry, &screen, &tap(100, 20), size, None));
        assert!(!repeats(&carry, &screen, &tap(500, 150), size, None));
        assert!(!repeats(&carry, &screen, &Action::Back, size, None));
        // The screen shows the choice now: the same tap there is another step.
        let chosen = vec![
            widget("First name", "[0,0][1000,100]", Some(true)),
            widget("Last name", "[0,100][1000,200]", Some(false)),
        ];
        assert!(!repeats(&carry, &chosen, &tap(500, 50), size, None));
    }

    #[test]
    fn a_way_that_does_the_same_again_further_on_is_followed_and_the_same_step_again_is_not() {
        let size = (1000, 1000);
        let screen = vec![widget("Delete", "[0,0][1000,100]", None)];
        let mut carry = Carry {
            widgets: screen.clone(),
            page_id: "list".into(),
            ..Carry::default()
        };
        remember(&mut carry, &tap(500, 50), size, Some(("w", 1)));
        // The steps between went through another page (a dialog that confirmed the delete).
        carry.page_id = "confirm".into();
        remember(&mut carry, &tap(500, 150), size, Some(("w", 2)));
        // Step 5 of the same way does what step 1 did: the run has moved on along the way.
        assert!(!repeats(
            &carry,
            &screen,
            &tap(500, 50),
            size,
            Some(("w", 5))
        ));
        // Step 1 again is going round; so is another way's step, or the labels'.
        assert!(repeats(
            &carry,
            &screen,
            &tap(500, 50),
            size,
            Some(("w", 1))
        ));
        assert!(repeats(
            &carry,
            &screen,
            &tap(500, 50),
            size,
            Some(("v", 5))
        ));
        assert!(repeats(&carry, &screen, &tap(500, 50), size, None));
    }

    #[test]
    fn a_way_back_on_a_screen_it_left_by_back_goes_round() {
        let size = (1000, 1000);
        let screen = vec![widget("Max reminder duration", "[0,0][1000,100]", None)];
        let dialog = vec![widget("5 minutes", "[0,0][1000,100]", Some(true))];
        let mut carry = Carry {
            widgets: screen.clone(),
            page_id: "timer".into(),
            ..Carry::default()
        };
        // Step 1 opens a dialog, step 2 dismisses it: the screen is as it was.
        remember(&mut carry, &tap(500, 50), size, Some(("w", 1)));
        carry.widgets = dialog;
        carry.page_id = "dialog".into();
        remember(&mut carry, &Action::Back, size, Some(("w", 2)));
        // Step 3 of the same way opens it again: going round, not moving on.
        assert!(repeats(
            &carry,
            &screen,
            &tap(500, 50),
            size,
            Some(("w", 3))
        ));
    }

    #[test]
    fn a_way_back_on_a_screen_it_never_left_goes_round() {
        let size = (1000, 1000);
        let ticked = |on: bool| vec![widget("Pinned", "[0,0][1000,100]", Some(on))];
        let mut carry = Carry {
            widgets: ticked(false),
            page_id: "note".into(),
            ..Carry::default()
        };
        // A box ticked and unticked on its page: the screen is as it was.
        remember(&mut carry, &tap(500, 50), size, Some(("w", 1)));
        carry.widgets = ticked(true);
        remember(&mut carry, &tap(500, 50), size, Some(("w", 2)));
        assert!(repeats(
            &carry,
            &ticked(false),
            &tap(500, 50),
            size,
            Some(("w", 3))
        ));
    }

    #[test]
    fn a_carry_remembers_a_bounded_number_of_steps() {
        let mut carry = Carry::default();
        for i in 0..(MOST_REMEMBERED + 20) {
            remember(&mut carry, &tap((i % 1000) as u16, 0), (1000, 1000), None);
        }
        assert_eq!(carry.steps_taken.len(), MOST_REMEMBERED);
    }
}
