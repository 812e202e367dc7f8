//! The candidate answers of one step and what speaks for and against each, as numbers a learned
//! model weighs: every widget of the current page (tapped, or typed into), the first step of the
//! planned way to each widget elsewhere that says part of the instruction, and "the task is done".
//!
//! Nothing here decides. Signals that hand-written rules once turned into a verdict ("a dialog is
//! confirmed last", "Back is never the way forward") are features now, so their weight comes from
//! data and holds on apps nobody read.

use std::collections::{BTreeSet, HashMap, HashSet};

use atlas_model::{Action, TraceStep, Widget};

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
const MAX_WAY_STEPS: usize = 12;
/// Two ways whose scores differ by less than this say about as much.
const CLOSE: f64 = 0.15;

/// Declares the features: the [`Feature`] enum, and [`FEATURES`], their names in the same order
/// (what a model is fitted and shipped against).
macro_rules! features {
    ($($(#[doc = $doc:literal])* $feature:ident = $name:literal,)*) => {
        /// A feature of a candidate. Set by value, never by name, so a misspelt feature does
        /// not compile instead of failing when an agent asks.
        #[derive(Debug, Clone, Copy, PartialEq, Eq)]
        pub(crate) enum Feature {
            $($(#[doc = $doc])* $feature,)*
        }

        /// The features of every candidate, in order. A model is fitted and shipped against
        /// these names.
        pub const FEATURES: &[&str] = &[$($name,)*];
    };
}

features! {
    // What the action says of the instruction.
    /// Share of what remains said by the way through this action to its goal.
    Route = "route",
    /// Share of the instruction the action's own label says.
    Own = "own",
    /// Share of the goal's own words the instruction asks for.
    GoalFit = "goal_fit",
    /// How alike in meaning the action's label and the open part are.
    Meaning = "meaning",
    /// How alike in meaning the goal's label and the open part are.
    GoalMeaning = "goal_meaning",
    /// The goal is on this page.
    Here = "here",
    /// 1 / (1 + steps of the way to the goal).
    Near = "near",
    /// The best way of all starts with this action.
    TopRoute = "top_route",
    /// This way's score minus the best other way's.
    Margin = "margin",
    /// The way says the earliest word of the instruction among close ways.
    FirstSaid = "first_said",
    /// The way says only words of parts after the one now open.
    LaterOnly = "later_only",
    /// The way says a single word of the instruction.
    OneWord = "one_word",
    /// The way says a single word and its goal is mostly about something else.
    Coincidence = "coincidence",
    /// Another widget shows the same words.
    SameLabel = "same_label",
    // What the widget is.
    /// OK, Save, Done, 确定….
    Commit = "commit",
    /// Cancel, Back, 取消….
    Cancel = "cancel",
    /// A list row (a name with lines under it).
    Row = "row",
    /// A checkbox, radio button or switch.
    Choice = "choice",
    /// Tapping a text field rather than typing in it.
    FieldTap = "field_tap",
    /// Checked or selected as last seen: choosing it again changes nothing.
    Checked = "checked",
    /// The share of this page's screens that showed the widget.
    Presence = "presence",
    /// Typing a value.
    Input = "input",
    /// The field and value the form's order and the last step point to.
    Fill = "fill",
    /// The one field of the page the last step opened.
    FillOpened = "fill_opened",
    /// The value typed was quoted in the instruction.
    ValueQuoted = "value_quoted",
    // What the session did.
    /// This label was tapped before in this task.
    Used = "used",
    /// The label only shows what the task typed.
    TypedLabel = "typed_label",
    /// Calls, deletes or sends though the instruction does not ask it.
    SideEffect = "side_effect",
    /// The way leads back to a page this task left.
    Revisit = "revisit",
    /// A commit while this page still says part of the task.
    CommitTooSoon = "commit_too_soon",
    /// A commit while values the instruction gives are still to be used.
    CommitUnfilled = "commit_unfilled",
    /// A list row the instruction does not name while it names another here.
    UnnamedRow = "unnamed_row",
    /// Right after a choice here, another option saying one word.
    Sibling = "sibling",
    // What the app's remembered tasks did.
    /// The way remembered tasks left this page after a choice on it.
    UsualExit = "usual_exit",
    /// The usual confirmation after a choice, or the app's closing label.
    Confirmation = "confirmation",
    /// The page's one commit when nothing else is left to do.
    CommitClosing = "commit_closing",
    /// The one permission grant of a dialog just opened.
    Allow = "allow",
    // "The task is done".
    /// The task is done.
    Finish = "finish",
    /// The task is done before any step.
    FinishFirst = "finish_first",
    /// The best share any label says of what remains.
    FinishLeft = "finish_left",
    /// The last step toggled a widget saying this much of the instruction.
    FinishToggled = "finish_toggled",
    /// The last step committed or closed a page.
    FinishClosed = "finish_closed",
    /// The last step opened this page.
    FinishOpened = "finish_opened",
    /// The last step opened this page, and it is a dialog.
    FinishSmall = "finish_small",
    /// The last step did not end on this page.
    FinishElsewhere = "finish_elsewhere",
    /// Only the instruction's opening act is left unsaid.
    FinishOnlyVerb = "finish_only_verb",
    /// Something on this page still says a little of the task.
    FinishHereLeft = "finish_here_left",
    /// The share of the instruction not yet said.
    FinishRemaining = "finish_remaining",
    /// Values the instruction gives that nobody typed.
    FinishValues = "finish_values",
}

/// How many features a candidate has.
const COUNT: usize = FEATURES.len();

/// A candidate's features, by [`Feature`].
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Values([f64; COUNT]);

impl Default for Values {
    fn default() -> Values {
        Values([0.0; COUNT])
    }
}

impl Values {
    pub(crate) fn set(&mut self, feature: Feature, value: f64) {
        self.0[feature as usize] = value;
    }

    pub(crate) fn get(&self, feature: Feature) -> f64 {
        self.0[feature as usize]
    }

    /// In [`FEATURES`]' order, as a model reads them.
    pub(crate) fn to_vec(self) -> Vec<f64> {
        self.0.to_vec()
    }
}

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
                way: None,
                checked: None,
            },
            Proposal::Finish => Recall::Done {
                confidence,
                message: None,
                way: None,
            },
        }
    }
}

pub(crate) struct Candidate {
    pub(crate) proposal: Proposal,
    pub(crate) x: Values,
    /// The label of the widget acted on, and of the goal the way leads to: what "meaning" and
    /// "goal_meaning" compare with the instruction once embedded.
    pub(crate) label: Option<String>,
    pub(crate) goal: Option<String>,
}

/// A widget anywhere in the app that says part of the instruction.
struct Goal<'a> {
    page: &'a str,
    widget: &'a Widget,
    share: f64,
}

/// A goal with the way to it from the current page.
struct GoalWay<'a> {
    goal: &'a Goal<'a>,
    /// The first transition of the way; `None` when the goal is here.
    first: Option<usize>,
    steps: usize,
    score: f64,
    said: BTreeSet<String>,
    earliest: usize,
}

fn flag(b: bool) -> f64 {
    b as u8 as f64
}

/// Every candidate of this step with its features.
pub(crate) fn candidates(r: &Reading) -> Vec<Candidate> {
    let here = r.current_page;
    let Some(page) = r.app.page(here) else {
        return Vec::new();
    };
    let used: HashSet<&str> = r
        .taken
        .iter()
        .map(|s| s.action.widget_text.trim())
        .filter(|t| !t.is_empty())
        .collect();
    let typed_only = |label: &str| only_typed(r, label);
    let goals = goals(r, &used, &typed_only);
    let best_share = goals.first().map_or(0.0, |g| g.share);
    let here_labels: HashSet<&str> = goals
        .iter()
        .filter(|g| g.page == here)
        .map(|g| stable_part(&g.widget.text))
        .collect();
    let ways = goal_ways(r, &goals, &here_labels);
    let (actions, action_ways) = actions_and_ways(r, page, &ways);
    let step = Step::read(r, page, &action_ways, best_share);

    let mut out: Vec<Candidate> = Vec::new();
    for (i, (action, to)) in actions.iter().enumerate() {
        let mut x = Values::default();
        let label = stable_part(&action.widget_text);
        let widget = page
            .widgets
            .iter()
            .find(|w| same_widget(action, &widget_action(w)));
        let way = action_ways[i];
        x.set(Feature::Own, r.own_share(&action.widget_text));
        if let Some(way) = way {
            way_features(&mut x, r, &step, &action_ways, i, way, to);
        }
        x.set(
            Feature::SameLabel,
            flag(!label.is_empty() && same_label_count(page, label) > 1),
        );
        widget_features(&mut x, page, action, widget);
        session_features(&mut x, r, &step, action, &used, &typed_only, &here_labels);
        habit_features(&mut x, &step, action);
        out.push(Candidate {
            proposal: Proposal::Act {
                action: action.clone(),
                expected_page: to.clone(),
            },
            x,
            label: Some(label.to_string()).filter(|l| !l.is_empty()),
            goal: way.map(|r| stable_part(&r.goal.widget.text).to_string()),
        });
    }

    out.extend(typing_candidates(r, page, &step.fill, &step.fill_opened));
    out.push(finish(
        r,
        step.moment,
        best_share,
        goals
            .iter()
            .any(|g| g.page == here && g.share >= LITTLE / 2.0),
        step.unused,
    ));
    out
}

/// Whether every named word of a label is one the task typed (the label only shows it).
fn only_typed(r: &Reading, label: &str) -> bool {
    let own = label_words(stable_part(label));
    let mut named = own
        .iter()
        .filter(|x| !x.chars().all(|c| c.is_ascii_digit()));
    named.clone().next().is_some() && named.all(|x| r.typed.contains(x))
}

/// The actions of this step: each widget here, and each way's first step not shown as one; with
/// the best way through each action.
fn actions_and_ways<'g>(
    r: &Reading,
    page: &atlas_model::Page,
    ways: &'g [GoalWay<'g>],
) -> (Vec<(Action, String)>, Vec<Option<&'g GoalWay<'g>>>) {
    let (app, here) = (r.app, r.current_page);
    let mut actions: Vec<(Action, String)> = page
        .widgets
        .iter()
        .filter(|w| actionable(w))
        .map(|w| (widget_action(w), here.to_string()))
        .collect();
    let mut first_steps: HashMap<usize, usize> = HashMap::new();
    for way in ways {
        let Some(t) = way.first else { continue };
        let transition = app.transition_at(t);
        let at = actions
            .iter()
            .position(|(a, _)| same_widget(a, transition.action()));
        let at = match at {
            Some(at) => {
                // The way's first step leads on; the action says where.
                actions[at].1 = transition.to_page().to_string();
                at
            }
            None => {
                actions.push((
                    transition.action().clone(),
                    transition.to_page().to_string(),
                ));
                actions.len() - 1
            }
        };
        first_steps.insert(t, at);
    }
    let way_of_action = |i: usize| -> Option<&'g GoalWay<'g>> {
        ways.iter()
            .filter(|way| match way.first {
                None => same_widget(&actions[i].0, &widget_action(way.goal.widget)),
                Some(t) => first_steps.get(&t) == Some(&i),
            })
            .max_by(|a, b| {
                a.score.total_cmp(&b.score).then_with(|| {
                    r.fit(&a.goal.widget.text)
                        .total_cmp(&r.fit(&b.goal.widget.text))
                })
            })
    };
    let action_ways = (0..actions.len()).map(way_of_action).collect();
    (actions, action_ways)
}

/// What this step's context says, the same for every candidate: the best ways, the last step,
/// the app's habits on this page, and the values still to be used.
struct Step<'a> {
    /// The best way's score, and the earliest word of the instruction among ways close to it.
    top: f64,
    earliest_close: usize,
    moment: Moment,
    acted_here: bool,
    chose_last_here: bool,
    exit: Option<&'a TraceStep>,
    confirmation: Option<&'a Widget>,
    commit_one: Option<&'a Widget>,
    allow: Option<&'a Widget>,
    named_row_here: bool,
    visited: HashSet<&'a str>,
    nothing_left: bool,
    fill: Option<Recall>,
    fill_opened: Option<Recall>,
    /// Values the instruction gives that no step typed or tapped.
    unused: usize,
}

impl<'a> Step<'a> {
    fn read(
        r: &Reading<'a>,
        page: &'a atlas_model::Page,
        action_ways: &[Option<&GoalWay>],
        best_share: f64,
    ) -> Step<'a> {
        let (app, here) = (r.app, r.current_page);
        let top = action_ways
            .iter()
            .flatten()
            .map(|r| r.score)
            .fold(0.0f64, f64::max);
        let earliest_close = action_ways
            .iter()
            .flatten()
            .filter(|way| top - way.score < CLOSE)
            .map(|way| way.earliest)
            .min()
            .unwrap_or(usize::MAX);
        let last = r.taken.last();
        let arrived = last.is_some_and(|s| s.to_page == here);
        let opened_now = last.is_some_and(|s| s.from_page != here)
            && !r.taken[..r.taken.len().saturating_sub(1)]
                .iter()
                .any(|s| s.from_page == here);
        let small = is_small(page);
        let chose_last_here = last.is_some_and(|s| s.from_page == here && s.to_page == here);
        let closing = closing_labels(app);
        let just_closed = last.is_some_and(|s| {
            closing.contains_key(s.action.widget_text.as_str()) || is_commit(&s.action.widget_text)
        });
        let nothing_left = best_share < LITTLE;
        Step {
            top,
            earliest_close,
            moment: Moment {
                arrived,
                opened_now,
                small,
                just_closed,
            },
            acted_here: r.taken.iter().any(|s| s.from_page == here),
            chose_last_here,
            exit: usual_exit(app, here).filter(|_| chose_last_here && small),
            confirmation: usual_confirmation(app, here)
                .filter(|_| chose_last_here && small)
                .or_else(|| closing_widget(app, here, &closing)),
            commit_one: commit_widget(app, here),
            allow: allow_widget(app, here).filter(|_| opened_now),
            named_row_here: page
                .widgets
                .iter()
                .any(|w| actionable(w) && is_row(&w.text) && !r.says(&w.text).is_empty()),
            visited: r.taken.iter().map(|s| s.from_page.as_str()).collect(),
            nothing_left,
            fill: fill_in(app, r.intent, r.taken, here),
            fill_opened: if opened_now && nothing_left {
                type_value(app, r.intent, r.taken, here)
            } else {
                None
            },
            unused: unused_values(r),
        }
    }
}

/// How many values the instruction gives that no step typed or tapped yet.
fn unused_values(r: &Reading) -> usize {
    r.template
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
        .count()
}

/// What the way through action `i` says of the instruction, against the other actions' ways.
fn way_features(
    x: &mut Values,
    r: &Reading,
    step: &Step,
    action_ways: &[Option<&GoalWay>],
    i: usize,
    way: &GoalWay,
    to: &str,
) {
    let top = step.top;
    x.set(Feature::Route, way.score.min(2.0));
    x.set(Feature::GoalFit, r.fit(&way.goal.widget.text));
    x.set(Feature::Here, flag(way.first.is_none()));
    x.set(Feature::Near, 1.0 / (1.0 + way.steps as f64));
    x.set(Feature::TopRoute, flag(way.score >= top && top > 0.0));
    let other = action_ways
        .iter()
        .enumerate()
        .filter(|(j, _)| *j != i)
        .filter_map(|(_, o)| o.map(|o| o.score))
        .fold(0.0f64, f64::max);
    x.set(Feature::Margin, (way.score - other).clamp(-1.0, 1.0));
    x.set(
        Feature::FirstSaid,
        flag(top - way.score < CLOSE && way.earliest == step.earliest_close),
    );
    x.set(
        Feature::LaterOnly,
        flag(!way.said.is_empty() && way.said.iter().all(|w| !r.now_or_before(w))),
    );
    let one = way.said.len() == 1;
    x.set(Feature::OneWord, flag(one));
    let goal_words = label_words(stable_part(&way.goal.widget.text));
    let mostly_other =
        goal_words.iter().filter(|w| r.asked.contains(*w)).count() * 2 < goal_words.len();
    x.set(
        Feature::Coincidence,
        flag(one && mostly_other && !r.taken.is_empty()),
    );
    x.set(
        Feature::Sibling,
        flag(
            one && step.chose_last_here
                && way.first.is_none()
                && !goal_words.iter().all(|w| r.remaining.contains(w)),
        ),
    );
    x.set(
        Feature::Revisit,
        flag(way.first.is_some() && step.visited.contains(to)),
    );
}

/// What the widget acted on is.
fn widget_features(
    x: &mut Values,
    page: &atlas_model::Page,
    action: &Action,
    widget: Option<&Widget>,
) {
    x.set(Feature::Commit, flag(is_commit(&action.widget_text)));
    x.set(
        Feature::Cancel,
        flag(action.action_type == "back" || is_cancel(&action.widget_text)),
    );
    x.set(Feature::Row, flag(is_row(&action.widget_text)));
    x.set(Feature::Choice, flag(widget.is_some_and(is_choice)));
    x.set(Feature::FieldTap, flag(widget.is_some_and(is_input)));
    x.set(
        Feature::Checked,
        flag(widget.is_some_and(|w| w.checked == Some(true))),
    );
    x.set(Feature::Presence, widget.map_or(1.0, |w| presence(page, w)));
}

/// What the session did, seen from this action.
fn session_features(
    x: &mut Values,
    r: &Reading,
    step: &Step,
    action: &Action,
    used: &HashSet<&str>,
    typed_only: &dyn Fn(&str) -> bool,
    here_labels: &HashSet<&str>,
) {
    let text = &action.widget_text;
    x.set(Feature::Used, flag(used.contains(text.trim())));
    x.set(Feature::TypedLabel, flag(typed_only(text)));
    x.set(
        Feature::SideEffect,
        flag(has_unasked_side_effect(text, &r.asked)),
    );
    x.set(
        Feature::CommitTooSoon,
        flag(is_commit(text) && !here_labels.is_empty()),
    );
    x.set(
        Feature::CommitUnfilled,
        flag(is_commit(text) && step.unused > 0),
    );
    x.set(
        Feature::UnnamedRow,
        flag(is_row(text) && r.says(text).is_empty() && step.named_row_here),
    );
}

/// What the app's remembered tasks did on this page, seen from this action.
fn habit_features(x: &mut Values, step: &Step, action: &Action) {
    let is = |w: Option<&Widget>| w.is_some_and(|w| same_widget(action, &widget_action(w)));
    x.set(
        Feature::UsualExit,
        flag(step.exit.is_some_and(|e| same_widget(action, &e.action))),
    );
    x.set(Feature::Confirmation, flag(is(step.confirmation)));
    x.set(
        Feature::CommitClosing,
        flag(step.nothing_left && step.unused == 0 && step.acted_here && is(step.commit_one)),
    );
    x.set(Feature::Allow, flag(is(step.allow)));
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
        let mut x = Values::default();
        x.set(Feature::Input, 1.0);
        x.set(Feature::Presence, presence(page, field));
        x.set(Feature::Own, r.own_share(&field.text));
        x.set(Feature::Fill, flag(same(fill)));
        x.set(Feature::FillOpened, flag(same(fill_opened)));
        x.set(Feature::ValueQuoted, flag(quoted));
        x.set(
            Feature::SameLabel,
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
fn goal_ways<'g>(
    r: &Reading,
    goals: &'g [Goal<'g>],
    here_labels: &HashSet<&str>,
) -> Vec<GoalWay<'g>> {
    let (app, here) = (r.app, r.current_page);
    let mut ways: Vec<GoalWay> = Vec::new();
    for goal in goals {
        if goal.page != here && here_labels.contains(stable_part(&goal.widget.text)) {
            continue;
        }
        let mut said: BTreeSet<String> = r.says(&goal.widget.text).into_iter().collect();
        let (first, steps) = if goal.page == here {
            (None, 0)
        } else {
            let Ok(plan) = app.plan(here, goal.page, MAX_WAY_STEPS) else {
                continue;
            };
            let Some(&step) = plan.steps.first() else {
                continue;
            };
            for s in &plan.steps {
                said.extend(r.says(&app.transition_at(*s).action().widget_text));
            }
            (Some(step), plan.steps.len())
        };
        let earliest = said
            .iter()
            .filter_map(|w| r.order.get(w))
            .min()
            .copied()
            .unwrap_or(usize::MAX);
        ways.push(GoalWay {
            goal,
            first,
            steps,
            score: r.share_of(&said),
            said,
            earliest,
        });
    }

    ways
}

/// What the last step says about where the session stands on this page.
#[derive(Clone, Copy)]
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
    let mut x = Values::default();
    x.set(Feature::Finish, 1.0);
    x.set(Feature::FinishFirst, flag(r.taken.is_empty()));
    x.set(Feature::FinishLeft, best_share.min(2.0));
    if let Some(last) = last {
        let toggled = last.from_page == here && last.action.action_type != "input";
        if toggled {
            x.set(
                Feature::FinishToggled,
                r.asked_share(&last.action.widget_text),
            );
        }
        x.set(Feature::FinishClosed, flag(just_closed));
        x.set(Feature::FinishOpened, flag(opened_now));
        x.set(Feature::FinishSmall, flag(opened_now && small));
        x.set(Feature::FinishElsewhere, flag(!arrived));
    }
    let only_verb =
        !r.taken.is_empty() && r.remaining.iter().all(|w| r.verb.contains(w)) && best_share < 0.3;
    x.set(Feature::FinishOnlyVerb, flag(only_verb));
    x.set(Feature::FinishHereLeft, flag(here_left));
    let total = r.weighted_mass(&r.asked);
    x.set(
        Feature::FinishRemaining,
        if total > 0.0 {
            r.remaining_mass / total
        } else {
            0.0
        },
    );
    x.set(Feature::FinishValues, unused as f64);
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
