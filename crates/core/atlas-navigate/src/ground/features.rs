//! The candidate answers of one step and what speaks for and against each, as numbers a learned
//! model weighs: every widget of the current page (tapped, or typed into), the first step of the
//! planned way to each widget elsewhere that says part of the instruction, and "the task is done".
//!
//! Nothing here decides. Signals that hand-written rules once turned into a verdict ("a dialog is
//! confirmed last", "Back is never the way forward") are features now, so their weight comes from
//! data and holds on apps nobody read.

use std::collections::{BTreeSet, HashMap, HashSet};

use atlas_model::{Action, Widget};

use super::facts::{
    actionable, has_unasked_side_effect, is_cancel, is_choice, is_commit, is_input, is_row,
    is_small, label_words, stable_part,
};
use super::fill::{fill_in, next_value, type_value, typing};
use super::habits::{
    allow_widget, closing_labels, closing_widget, commit_widget, usual_confirmation, usual_exit,
};
use super::reading::Reading;
use crate::memory::Recall;

/// Below this share of the instruction, nothing left on offer is worth doing.
const LITTLE: f64 = 0.12;
/// Goals weighed with the way to them, best first.
const MAX_GOALS: usize = 40;
/// The longest way to a goal worth planning.
const MAX_ROUTE_STEPS: usize = 12;
/// Two ways whose scores differ by less than this say about as much.
const CLOSE: f64 = 0.15;

/// The features of every candidate, in order. A model is fitted and shipped against these names.
pub const FEATURES: &[&str] = &[
    // What the action says of the instruction.
    "route",        // share of what remains said by the way through this action to its goal
    "own",          // share of the instruction the action's own label says
    "goal_fit",     // share of the goal's own words the instruction asks for
    "meaning",      // how alike in meaning the action's label and the open part are
    "goal_meaning", // ...the goal's label and the open part
    "here",         // the goal is on this page
    "near",         // 1 / (1 + steps of the way to the goal)
    "top_route",    // the best way of all starts with this action
    "margin",       // this way's score minus the best other way's
    "first_said",   // the way says the earliest word of the instruction among close ways
    "later_only",   // the way says only words of parts after the one now open
    "one_word",     // the way says a single word of the instruction
    "coincidence",  // ...and its goal is mostly about something else
    "same_label",   // another widget shows the same words
    // What the widget is.
    "commit",       // OK, Save, Done, 确定…
    "cancel",       // Cancel, Back, 取消…
    "row",          // a list row (a name with lines under it)
    "choice",       // a checkbox, radio button or switch
    "field_tap",    // tapping a text field rather than typing in it
    "checked",      // checked or selected as last seen: choosing it again changes nothing
    "presence",     // the share of this page's screens that showed the widget
    "input",        // typing a value
    "fill",         // the field and value the form's order and the last step point to
    "fill_opened",  // the one field of the page the last step opened
    "value_quoted", // the value typed was quoted in the instruction
    // What the session did.
    "used",            // this label was tapped before in this task
    "typed_label",     // the label only shows what the task typed
    "side_effect",     // calls, deletes or sends though the instruction does not ask it
    "revisit",         // the way leads back to a page this task left
    "commit_too_soon", // a commit while this page still says part of the task
    "commit_unfilled", // a commit while values the instruction gives are still to be used
    "unnamed_row",     // a list row the instruction does not name while it names another here
    "sibling",         // right after a choice here, another option saying one word
    // What the app's remembered tasks did.
    "usual_exit",     // the way remembered tasks left this page after a choice on it
    "confirmation",   // the usual confirmation after a choice, or the app's closing label
    "commit_closing", // the page's one commit when nothing else is left to do
    "allow",          // the one permission grant of a dialog just opened
    // "The task is done".
    "finish",
    "finish_first",     // ...before any step
    "finish_left",      // the best share any label says of what remains
    "finish_toggled",   // the last step toggled a widget saying this much of the instruction
    "finish_closed",    // the last step committed or closed a page
    "finish_opened",    // the last step opened this page
    "finish_small",     // ...and it is a dialog
    "finish_elsewhere", // the last step did not end on this page
    "finish_only_verb", // only the instruction's opening act is left unsaid
    "finish_here_left", // something on this page still says a little of the task
    "finish_remaining", // the share of the instruction not yet said
    "finish_values",    // values the instruction gives that nobody typed
];

/// What a candidate proposes.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Proposal {
    Act {
        action: Action,
        expected_page: String,
    },
    Finish,
}

impl Proposal {
    pub(crate) fn label(&self) -> &str {
        match self {
            Proposal::Act { action, .. } if action.action_type == "back" => "back",
            Proposal::Act { action, .. } => stable_part(&action.widget_text),
            Proposal::Finish => "完成",
        }
    }

    pub(crate) fn into_recall(self, confidence: f64) -> Recall {
        match self {
            Proposal::Act {
                action,
                expected_page,
            } => Recall::Act {
                action,
                expected_page,
                remaining: 1,
                confidence,
            },
            Proposal::Finish => Recall::Done { confidence },
        }
    }
}

pub(crate) struct Candidate {
    pub(crate) proposal: Proposal,
    pub(crate) x: Vec<f64>,
    /// The label of the widget acted on, and of the goal the way leads to: what "meaning" and
    /// "goal_meaning" compare with the instruction once embedded.
    pub(crate) label: Option<String>,
    pub(crate) goal: Option<String>,
}

impl Candidate {
    pub(crate) fn set(&mut self, name: &str, value: f64) {
        set(&mut self.x, name, value);
    }
}

/// A widget anywhere in the app that says part of the instruction.
struct Goal<'a> {
    page: &'a str,
    widget: &'a Widget,
    share: f64,
}

/// A goal with the way to it from the current page.
struct Route<'a> {
    goal: &'a Goal<'a>,
    /// The first transition of the way; `None` when the goal is here.
    first: Option<usize>,
    steps: usize,
    score: f64,
    said: BTreeSet<String>,
    earliest: usize,
}

fn set(x: &mut [f64], name: &str, value: f64) {
    let i = FEATURES
        .iter()
        .position(|f| *f == name)
        .unwrap_or_else(|| panic!("unknown feature {name}"));
    x[i] = value;
}

fn flag(b: bool) -> f64 {
    b as u8 as f64
}

/// Every candidate of this step with its features.
pub(crate) fn candidates(r: &Reading) -> Vec<Candidate> {
    let app = r.app;
    let here = r.current_page;
    let Some(page) = app.page(here) else {
        return Vec::new();
    };
    let used: HashSet<&str> = r
        .taken
        .iter()
        .map(|s| s.action.widget_text.trim())
        .filter(|t| !t.is_empty())
        .collect();
    let typed_only = |label: &str| {
        let own = label_words(stable_part(label));
        let mut named = own
            .iter()
            .filter(|x| !x.chars().all(|c| c.is_ascii_digit()));
        named.clone().next().is_some() && named.all(|x| r.typed.contains(x))
    };

    let goals = goals(r, &used, &typed_only);
    let best_share = goals.first().map_or(0.0, |g| g.share);
    let here_labels: HashSet<&str> = goals
        .iter()
        .filter(|g| g.page == here)
        .map(|g| stable_part(&g.widget.text))
        .collect();

    let routes = routes(r, &goals, &here_labels);

    // The actions of this step: each widget here, and each way's first step not shown as one.
    let mut actions: Vec<(Action, String)> = page
        .widgets
        .iter()
        .filter(|w| actionable(w))
        .map(|w| {
            (
                Action {
                    action_type: "click".into(),
                    widget_id: w.id.clone(),
                    widget_text: w.text.clone(),
                    ..Default::default()
                },
                here.to_string(),
            )
        })
        .collect();
    let mut first_steps: HashMap<usize, usize> = HashMap::new();
    for route in &routes {
        let Some(t) = route.first else { continue };
        let transition = &app.transitions()[t];
        let at = actions
            .iter()
            .position(|(a, _)| same_widget(a, &transition.action));
        let at = match at {
            Some(at) => {
                // The way's first step leads on; the action says where.
                actions[at].1 = transition.to_page.clone();
                at
            }
            None => {
                actions.push((transition.action.clone(), transition.to_page.clone()));
                actions.len() - 1
            }
        };
        first_steps.insert(t, at);
    }
    let route_of_action = |i: usize| -> Option<&Route> {
        routes
            .iter()
            .filter(|route| match route.first {
                None => same_widget(&actions[i].0, &widget_action(route.goal.widget)),
                Some(t) => first_steps.get(&t) == Some(&i),
            })
            .max_by(|a, b| {
                a.score.total_cmp(&b.score).then_with(|| {
                    r.fit(&a.goal.widget.text)
                        .total_cmp(&r.fit(&b.goal.widget.text))
                })
            })
    };
    let action_routes: Vec<Option<&Route>> = (0..actions.len()).map(route_of_action).collect();
    let top = action_routes
        .iter()
        .flatten()
        .map(|r| r.score)
        .fold(0.0f64, f64::max);
    let earliest_close = action_routes
        .iter()
        .flatten()
        .filter(|route| top - route.score < CLOSE)
        .map(|route| route.earliest)
        .min()
        .unwrap_or(usize::MAX);

    // Context the app's habits and the last step give.
    let last = r.taken.last();
    let arrived = last.is_some_and(|s| s.to_page == here);
    let opened_now = last.is_some_and(|s| s.from_page != here)
        && !r.taken[..r.taken.len().saturating_sub(1)]
            .iter()
            .any(|s| s.from_page == here);
    let small = is_small(page);
    let acted_here = r.taken.iter().any(|s| s.from_page == here);
    let chose_last_here = last.is_some_and(|s| s.from_page == here && s.to_page == here);
    let closing = closing_labels(app);
    let just_closed = last.is_some_and(|s| {
        closing.contains_key(s.action.widget_text.as_str()) || is_commit(&s.action.widget_text)
    });
    let exit = usual_exit(app, here).filter(|_| chose_last_here && small);
    let confirmation = usual_confirmation(app, here)
        .filter(|_| chose_last_here && small)
        .or_else(|| closing_widget(app, here, &closing));
    let commit_one = commit_widget(app, here);
    let allow = allow_widget(app, here).filter(|_| opened_now);
    let named_row_here = page
        .widgets
        .iter()
        .any(|w| actionable(w) && is_row(&w.text) && !r.says(&w.text).is_empty());
    let visited: HashSet<&str> = r.taken.iter().map(|s| s.from_page.as_str()).collect();
    let nothing_left = best_share < LITTLE;
    let fill = fill_in(app, r.intent, r.taken, here);
    let fill_opened = if opened_now && nothing_left {
        type_value(app, r.intent, r.taken, here)
    } else {
        None
    };

    // A value the instruction gives that no step typed or tapped is still to be used.
    let unused = r
        .template
        .values
        .iter()
        .filter(|v| {
            let v = v.to_lowercase();
            !r.taken.iter().any(|s| {
                let typed = s.action.input_text.to_lowercase();
                (!typed.is_empty() && v.starts_with(&typed))
                    || s.action.widget_text.to_lowercase().contains(&v)
            })
        })
        .count();

    let mut out: Vec<Candidate> = Vec::new();
    for (i, (action, to)) in actions.iter().enumerate() {
        let mut x = vec![0.0; FEATURES.len()];
        let label = stable_part(&action.widget_text);
        let widget = page
            .widgets
            .iter()
            .find(|w| same_widget(action, &widget_action(w)));
        let route = action_routes[i];
        set(&mut x, "own", r.own_share(&action.widget_text));
        if let Some(route) = route {
            set(&mut x, "route", route.score.min(2.0));
            set(&mut x, "goal_fit", r.fit(&route.goal.widget.text));
            set(&mut x, "here", flag(route.first.is_none()));
            set(&mut x, "near", 1.0 / (1.0 + route.steps as f64));
            set(&mut x, "top_route", flag(route.score >= top && top > 0.0));
            let other = action_routes
                .iter()
                .enumerate()
                .filter(|(j, _)| *j != i)
                .filter_map(|(_, o)| o.map(|o| o.score))
                .fold(0.0f64, f64::max);
            set(&mut x, "margin", (route.score - other).clamp(-1.0, 1.0));
            set(
                &mut x,
                "first_said",
                flag(top - route.score < CLOSE && route.earliest == earliest_close),
            );
            set(
                &mut x,
                "later_only",
                flag(!route.said.is_empty() && route.said.iter().all(|w| !r.now_or_before(w))),
            );
            let one = route.said.len() == 1;
            set(&mut x, "one_word", flag(one));
            let goal_words = label_words(stable_part(&route.goal.widget.text));
            let mostly_other =
                goal_words.iter().filter(|w| r.asked.contains(*w)).count() * 2 < goal_words.len();
            set(
                &mut x,
                "coincidence",
                flag(one && mostly_other && !r.taken.is_empty()),
            );
            set(
                &mut x,
                "sibling",
                flag(
                    one && chose_last_here
                        && route.first.is_none()
                        && !goal_words.iter().all(|w| r.remaining.contains(w)),
                ),
            );
            set(
                &mut x,
                "revisit",
                flag(route.first.is_some() && visited.contains(to.as_str())),
            );
        }
        set(
            &mut x,
            "same_label",
            flag(!label.is_empty() && same_label_count(page, label) > 1),
        );
        set(&mut x, "commit", flag(is_commit(&action.widget_text)));
        set(
            &mut x,
            "cancel",
            flag(action.action_type == "back" || is_cancel(&action.widget_text)),
        );
        set(&mut x, "row", flag(is_row(&action.widget_text)));
        set(&mut x, "choice", flag(widget.is_some_and(is_choice)));
        set(&mut x, "field_tap", flag(widget.is_some_and(is_input)));
        set(
            &mut x,
            "checked",
            flag(widget.is_some_and(|w| w.checked == Some(true))),
        );
        set(
            &mut x,
            "presence",
            widget.map_or(1.0, |w| presence(page, w)),
        );
        set(
            &mut x,
            "used",
            flag(used.contains(action.widget_text.trim())),
        );
        set(&mut x, "typed_label", flag(typed_only(&action.widget_text)));
        set(
            &mut x,
            "side_effect",
            flag(has_unasked_side_effect(&action.widget_text, &r.asked)),
        );
        set(
            &mut x,
            "commit_too_soon",
            flag(is_commit(&action.widget_text) && !here_labels.is_empty()),
        );
        set(
            &mut x,
            "commit_unfilled",
            flag(is_commit(&action.widget_text) && unused > 0),
        );
        set(
            &mut x,
            "unnamed_row",
            flag(
                is_row(&action.widget_text)
                    && r.says(&action.widget_text).is_empty()
                    && named_row_here,
            ),
        );
        set(
            &mut x,
            "usual_exit",
            flag(exit.is_some_and(|e| same_widget(action, &e.action))),
        );
        set(
            &mut x,
            "confirmation",
            flag(confirmation.is_some_and(|w| same_widget(action, &widget_action(w)))),
        );
        set(
            &mut x,
            "commit_closing",
            flag(
                nothing_left
                    && unused == 0
                    && acted_here
                    && commit_one.is_some_and(|w| same_widget(action, &widget_action(w))),
            ),
        );
        set(
            &mut x,
            "allow",
            flag(allow.is_some_and(|w| same_widget(action, &widget_action(w)))),
        );
        out.push(Candidate {
            proposal: Proposal::Act {
                action: action.clone(),
                expected_page: to.clone(),
            },
            x,
            label: Some(label.to_string()).filter(|l| !l.is_empty()),
            goal: route.map(|r| stable_part(&r.goal.widget.text).to_string()),
        });
    }

    out.extend(typing_candidates(r, page, &fill, &fill_opened));
    out.push(finish(
        r,
        Moment {
            arrived,
            opened_now,
            small,
            just_closed,
        },
        best_share,
        goals
            .iter()
            .any(|g| g.page == here && g.share >= LITTLE / 2.0),
        unused,
    ));
    out
}

/// Typing: each field of `page` with the instruction's next value for it, and whether the
/// form's order and the last step point to it (`fill`, `fill_opened`).
fn typing_candidates(
    r: &Reading,
    page: &atlas_model::Page,
    fill: &Option<Recall>,
    fill_opened: &Option<Recall>,
) -> Vec<Candidate> {
    let here = r.current_page;
    let mut out = Vec::new();
    for field in page.widgets.iter().filter(|w| is_input(w)) {
        let Some(value) = next_value(&r.template, r.taken, field, false) else {
            continue;
        };
        let quoted = r.template.quoted.get(value.index).copied().unwrap_or(false);
        let Recall::Act { action, .. } = typing(field, value, here, 0.0) else {
            continue;
        };
        let same = |recall: &Option<Recall>| matches!(recall, Some(Recall::Act { action: a, .. }) if *a == action);
        let mut x = vec![0.0; FEATURES.len()];
        set(&mut x, "input", 1.0);
        set(&mut x, "presence", presence(page, field));
        set(&mut x, "own", r.own_share(&field.text));
        set(&mut x, "fill", flag(same(fill)));
        set(&mut x, "fill_opened", flag(same(fill_opened)));
        set(&mut x, "value_quoted", flag(quoted));
        set(
            &mut x,
            "same_label",
            flag(same_label_count(page, stable_part(&field.text)) > 1),
        );
        out.push(Candidate {
            proposal: Proposal::Act {
                action,
                expected_page: here.to_string(),
            },
            x,
            label: None,
            goal: None,
        });
    }

    out
}

/// How many widgets of `page` show `label` (values under it aside).
fn same_label_count(page: &atlas_model::Page, label: &str) -> usize {
    page.widgets
        .iter()
        .filter(|w| stable_part(&w.text) == label)
        .count()
}

/// Widgets anywhere in the app that say part of what remains, most telling first.
fn goals<'a>(
    r: &Reading<'a>,
    used: &HashSet<&str>,
    typed_only: &dyn Fn(&str) -> bool,
) -> Vec<Goal<'a>> {
    let here = r.current_page;
    let mut goals: Vec<Goal> = Vec::new();
    for p in r.app.pages() {
        for w in p
            .widgets
            .iter()
            .filter(|w| actionable(w) && !used.contains(w.text.trim()) && !is_cancel(&w.text))
        {
            if typed_only(&w.text) {
                continue;
            }
            let share = r.own_share(&w.text);
            if share > 0.0 {
                goals.push(Goal {
                    page: &p.page_id,
                    widget: w,
                    share,
                });
            }
        }
    }
    goals.sort_by(|a, b| {
        b.share
            .total_cmp(&a.share)
            .then_with(|| (b.page == here).cmp(&(a.page == here)))
    });
    goals.truncate(MAX_GOALS);
    goals
}

/// Each goal with the way to it from this page; the labels tapped on the way say part of the
/// instruction too. A goal whose label this page shows is tapped here, not reached elsewhere.
fn routes<'g>(r: &Reading, goals: &'g [Goal<'g>], here_labels: &HashSet<&str>) -> Vec<Route<'g>> {
    let (app, here) = (r.app, r.current_page);
    let mut routes: Vec<Route> = Vec::new();
    for goal in goals {
        if goal.page != here && here_labels.contains(stable_part(&goal.widget.text)) {
            continue;
        }
        let mut said: BTreeSet<String> = r.says(&goal.widget.text).into_iter().collect();
        let (first, steps) = if goal.page == here {
            (None, 0)
        } else {
            let Ok(plan) = app.plan(here, goal.page, MAX_ROUTE_STEPS) else {
                continue;
            };
            let Some(&step) = plan.steps.first() else {
                continue;
            };
            for s in &plan.steps {
                said.extend(r.says(&app.transitions()[*s].action.widget_text));
            }
            (Some(step), plan.steps.len())
        };
        let earliest = said
            .iter()
            .filter_map(|w| r.order.get(w))
            .min()
            .copied()
            .unwrap_or(usize::MAX);
        routes.push(Route {
            goal,
            first,
            steps,
            score: r.share_of(&said),
            said,
            earliest,
        });
    }

    routes
}

/// What the last step says about where the session stands on this page.
struct Moment {
    /// The last step ended here.
    arrived: bool,
    /// The last step opened this page, which the task had not acted on before.
    opened_now: bool,
    /// This page is a dialog.
    small: bool,
    /// The last step committed or closed a page.
    just_closed: bool,
}

/// "The task is done", with what speaks for and against it.
fn finish(
    r: &Reading,
    moment: Moment,
    best_share: f64,
    here_left: bool,
    unused: usize,
) -> Candidate {
    let Moment {
        arrived,
        opened_now,
        small,
        just_closed,
    } = moment;
    let here = r.current_page;
    let last = r.taken.last();
    let mut x = vec![0.0; FEATURES.len()];
    set(&mut x, "finish", 1.0);
    set(&mut x, "finish_first", flag(r.taken.is_empty()));
    set(&mut x, "finish_left", best_share.min(2.0));
    if let Some(last) = last {
        let toggled = last.from_page == here && last.action.action_type != "input";
        if toggled {
            set(
                &mut x,
                "finish_toggled",
                r.asked_share(&last.action.widget_text),
            );
        }
        set(&mut x, "finish_closed", flag(just_closed));
        set(&mut x, "finish_opened", flag(opened_now));
        set(&mut x, "finish_small", flag(opened_now && small));
        set(&mut x, "finish_elsewhere", flag(!arrived));
    }
    let only_verb =
        !r.taken.is_empty() && r.remaining.iter().all(|w| r.verb.contains(w)) && best_share < 0.3;
    set(&mut x, "finish_only_verb", flag(only_verb));
    set(&mut x, "finish_here_left", flag(here_left));
    let total = r.weighted_mass(&r.asked);
    set(
        &mut x,
        "finish_remaining",
        if total > 0.0 {
            r.remaining_mass / total
        } else {
            0.0
        },
    );
    set(&mut x, "finish_values", unused as f64);
    Candidate {
        proposal: Proposal::Finish,
        x,
        label: None,
        goal: None,
    }
}

/// The share of the page's screens that showed `w` (1 for pages stored before it was counted).
fn presence(page: &atlas_model::Page, w: &Widget) -> f64 {
    if w.seen == 0 {
        return 1.0;
    }
    (f64::from(w.seen) / page.visited_count.max(1) as f64).min(1.0)
}

fn widget_action(w: &Widget) -> Action {
    Action {
        action_type: "click".into(),
        widget_id: w.id.clone(),
        widget_text: w.text.clone(),
        ..Default::default()
    }
}

/// Whether two taps name the same widget: by label when both have one (ids such as list indices
/// shift), by id otherwise; the Back key only as itself.
fn same_widget(a: &Action, b: &Action) -> bool {
    if (a.action_type == "back") != (b.action_type == "back") {
        return false;
    }
    if a.action_type == "back" {
        return true;
    }
    let (ta, tb) = (a.widget_text.trim(), b.widget_text.trim());
    if !ta.is_empty() && !tb.is_empty() {
        ta == tb
    } else {
        !a.widget_id.is_empty() && a.widget_id == b.widget_id
    }
}
