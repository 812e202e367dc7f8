//! Navigation grounded in labels: for an instruction nobody has done before, the widget anywhere
//! in the app whose label says most of what the instruction still asks, and the way there.
//!
//! The instruction's words are weighed by how rare they are among the app's labels (inverse
//! document frequency over pages), words already said by the labels the session tapped count no
//! more, and the best widget must stand clearly above the next one with a different label. When
//! the session has acted and nothing left on offer says enough of what remains, the task is done.
//! Anything less clear is "unsure": a confident wrong tap costs an agent more than a question to
//! its LLM.

use std::collections::{HashMap, HashSet};

use atlas_graph::AppGraph;
use atlas_model::{TraceStep, Widget};
use atlas_text::{Template, words};

use crate::fill::{act_on, actionable, is_input, is_small, tapping, type_value};
use crate::memory::Recall;

/// The best widget must say at least this share of what remains of the instruction...
const MIN_SHARE: f64 = 0.3;
/// ...and this much more than the best widget with another label.
const MIN_MARGIN: f64 = 0.15;
/// After at least one step, below this share nothing left is worth doing: the task is done.
const DONE_BELOW: f64 = 0.12;
/// Labels that commit what a page holds (a dialog's choice, a form, a colour picked): a task that
/// changed something on such a page is not done until one is pressed. Conventions shared by
/// Android, HarmonyOS and the web, in English and Chinese, not any one app's words.
const COMMIT_LABELS: &[&str] = &[
    "ok", "save", "yes", "done", "apply", "confirm", "send", "确定", "保存", "是", "完成", "确认",
    "应用", "发送",
];
/// Labels that grant a permission the platform asks for on the way (Android, HarmonyOS).
const ALLOW_LABELS: &[&str] = &[
    "allow",
    "while using the app",
    "only this time",
    "允许",
    "始终允许",
    "仅使用期间允许",
    "本次允许",
];
/// Labels that dismiss what a page offers: pressing one undoes the step that opened the page, so
/// it is never the way forward.
const CANCEL_LABELS: &[&str] = &[
    "no",
    "cancel",
    "back",
    "go back",
    "navigate up",
    "取消",
    "否",
    "返回",
];
/// A share of the instruction that one label saying it makes it that label's task.
const MOST: f64 = 0.6;
/// A part of the instruction is done when this share of what labels can say of it was said.
const PART_DONE: f64 = 0.5;
/// How much a word of a later part of the instruction counts while an earlier part is open.
const LATER_PART: f64 = 0.5;
/// Goals weighed with the way to them, best first.
const MAX_GOALS: usize = 40;
/// The longest way to a goal worth planning.
const MAX_ROUTE_STEPS: usize = 12;

/// Words interfaces use for the same act, in English (as stemmed) and Chinese: an instruction's
/// "add" is a button's "New", its "call" a "Dial". Conventions of the platforms, not of any app.
const SAME_ACT: &[&[&str]] = &[
    &["add", "new", "creat", "添加", "新建", "创建", "新增"],
    &["delet", "remov", "删除", "移除"],
    &["call", "dial", "拨打", "呼叫"],
    &["edit", "modifi", "编辑", "修改"],
];

/// Acts with effects of their own (as [`label_words`] reads them): calling, deleting, sending.
const SIDE_EFFECT_ACTS: &[&str] = &["call", "delet", "send", "发送"];

fn label_words(text: &str) -> HashSet<String> {
    words(&text.replace("<br>", " "))
        .into_iter()
        .map(
            |w| match SAME_ACT.iter().find(|group| group.contains(&w.as_str())) {
                Some(group) => group[0].to_string(),
                None => w,
            },
        )
        .collect()
}

/// Why the labels leave the next step open. An agent is told, so its LLM knows what to decide; the
/// evaluation counts the causes.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Doubt {
    /// The session's last step did not end on this page: the agent is somewhere unexpected.
    Elsewhere,
    /// Nothing left on offer says what the instruction asks, yet this is not clearly the end.
    NotDone,
    /// No label anywhere says enough of what remains.
    NothingSays,
    /// The labels that say it cannot be reached from here.
    NoWay,
    /// Two widgets show the same words.
    SameLabel(String),
    /// One word in common with a label mostly about something else.
    Coincidence(String),
    /// Two ways say about as much.
    TooClose(String, String),
    /// The widget asks for a value the instruction does not give.
    NoValue(String),
}

impl Doubt {
    /// A short stable name for counting.
    pub(crate) fn code(&self) -> &'static str {
        match self {
            Doubt::Elsewhere => "elsewhere",
            Doubt::NotDone => "not_done",
            Doubt::NothingSays => "nothing_says",
            Doubt::NoWay => "no_way",
            Doubt::SameLabel(_) => "same_label",
            Doubt::Coincidence(_) => "coincidence",
            Doubt::TooClose(..) => "too_close",
            Doubt::NoValue(_) => "no_value",
        }
    }

    /// What the agent is told.
    pub(crate) fn message(&self) -> String {
        let why = match self {
            Doubt::Elsewhere => "上一步没有到达当前页面".to_string(),
            Doubt::NotDone => "界面上没有明确的下一步，但任务似乎尚未完成".to_string(),
            Doubt::NothingSays => "没有控件文字与意图相符".to_string(),
            Doubt::NoWay => "与意图相符的控件无法从当前页面到达".to_string(),
            Doubt::SameLabel(l) => format!("多个控件显示相同文字“{l}”"),
            Doubt::Coincidence(l) => format!("“{l}”只有一个词与意图相同"),
            Doubt::TooClose(a, b) => format!("“{a}”与“{b}”同样符合意图"),
            Doubt::NoValue(l) => format!("意图没有给出要输入到“{l}”的内容"),
        };
        format!("不确定({}): {why}", self.code())
    }
}

struct Candidate<'a> {
    page: &'a str,
    widget: &'a Widget,
    share: f64,
}

/// What the labels of `app` say to do on `current_page` for `intent`, after the steps `taken`.
pub(crate) fn ground(
    app: &AppGraph,
    intent: &str,
    current_page: &str,
    taken: &[TraceStep],
) -> Result<Recall, Doubt> {
    if let Some(typing) = crate::fill::fill_in(app, intent, taken, current_page) {
        return Ok(typing);
    }
    let pages = app.pages();
    // Rarity of each word among the pages' labels.
    let mut df: HashMap<String, usize> = HashMap::new();
    for page in pages {
        let mut seen = HashSet::new();
        for w in &page.widgets {
            seen.extend(label_words(&w.text));
        }
        for word in seen {
            *df.entry(word).or_default() += 1;
        }
    }
    let idf = |w: &str| (1.0 + pages.len() as f64 / (1.0 + *df.get(w).unwrap_or(&0) as f64)).ln();
    let used: HashSet<&str> = taken
        .iter()
        .map(|s| s.action.widget_text.as_str())
        .filter(|t| !t.is_empty())
        .collect();
    let template = Template::of(intent);
    let said = said_so_far(app, &template, taken, current_page);
    let value_words: Vec<HashSet<String>> = template
        .values
        .iter()
        .map(|v| label_words(v))
        .filter(|w| !w.is_empty())
        .collect();
    // What the session typed shows up as labels afterwards ("deadlines" in a list): a result, not a goal.
    let typed: HashSet<String> = taken
        .iter()
        .flat_map(|s| label_words(&s.action.input_text))
        .collect();
    // The instruction as parts in order, without the app's name and what things are now.
    let instruction_parts = clauses(&without_current_state(&without_app_name(intent)));
    let asked: HashSet<String> = instruction_parts
        .iter()
        .flat_map(|c| label_words(c))
        .collect();
    let mut remaining: HashSet<String> = asked
        .iter()
        .filter(|w| !said.contains(*w))
        .cloned()
        .collect();
    // Shares are of the whole instruction, so leftovers like "app" weigh what they weigh in it;
    // but only of what some label of the app says: no tap can say "function" of "turn on the
    // vibration function", and a word no tap can say would count as most telling of all.
    let sayable = |w: &&String| df.contains_key(*w);
    let mass: f64 = asked.iter().filter(sayable).map(|w| idf(w)).sum();
    // Choices are weighed against what remains to be said; whether anything is left worth doing
    // against the whole instruction.
    //
    // Instructions list their parts in the order they are done ("open 'android' folder, sort the
    // files by extension"): the words of the first part not yet done weigh fully in choosing the
    // way, those of later parts less, so a label that happens to say a later part does not jump
    // the queue.
    let parts: Vec<HashSet<String>> = instruction_parts.iter().map(|c| label_words(c)).collect();
    let done: Vec<bool> = parts
        .iter()
        .map(|part| {
            let sayable_mass: f64 = part.iter().filter(sayable).map(|w| idf(w)).sum();
            let said_mass: f64 = part
                .iter()
                .filter(sayable)
                .filter(|w| !remaining.contains(*w))
                .map(|w| idf(w))
                .sum();
            said_mass >= sayable_mass * PART_DONE
        })
        .collect();
    let current_part = done.iter().position(|d| !d);
    // What a part that is done leaves unsaid ("items" of "sort the items by date" once sorted
    // by date) asks for nothing more when the session saw a widget saying it and chose otherwise
    // ("Title" already selected in "Sort by" when sorting by title). Never the values, nor a
    // part's last word: where "change the theme to light" ends is what it asks for.
    let kept: HashSet<String> = value_words
        .iter()
        .flatten()
        .cloned()
        .chain(
            instruction_parts
                .iter()
                .filter_map(|c| words(c).into_iter().rev().find(|w| df.contains_key(w))),
        )
        .collect();
    // Pages left pass over what they offered; a choice made on this page passes over its other
    // options too, typing in a field does not.
    let chose_here = taken.iter().any(|s| {
        s.from_page == current_page
            && s.action.action_type != "input"
            && !app.page(current_page).is_some_and(|p| {
                p.widgets
                    .iter()
                    .any(|w| is_input(w) && w.text.trim() == s.action.widget_text.trim())
            })
    });
    let passed_over: HashSet<String> = taken
        .iter()
        .map(|s| s.from_page.as_str())
        .filter(|p| *p != current_page || chose_here)
        .collect::<HashSet<_>>()
        .into_iter()
        .filter_map(|p| app.page(p))
        .flat_map(|p| p.widgets.iter().filter(|w| actionable(w)))
        .flat_map(|w| label_words(stable_part(&w.text)))
        .collect();
    remaining.retain(|w| {
        kept.contains(w)
            || !passed_over.contains(w)
            || parts
                .iter()
                .zip(&done)
                .any(|(part, done)| !done && part.contains(w))
    });
    let weight = |w: &str| {
        let now_or_before = current_part.is_none_or(|k| parts[..=k].iter().any(|p| p.contains(w)));
        idf(w) * if now_or_before { 1.0 } else { LATER_PART }
    };
    let remaining_mass: f64 = remaining.iter().filter(sayable).map(|w| weight(w)).sum();
    // The words of remaining a label says. Numbers alone ("05:00", "3 items") are values shown
    // everywhere: they count only for a label showing a whole value the instruction names
    // ("125%"), not a digit group of one ("00" of "5:00").
    let says = |label: &str| -> Vec<String> {
        let shared: Vec<String> = label_words(stable_part(label))
            .intersection(&remaining)
            .cloned()
            .collect();
        let numeric = shared.iter().all(|x| x.chars().all(|c| c.is_ascii_digit()));
        if numeric
            && !value_words
                .iter()
                .any(|v| v.iter().all(|x| shared.contains(x)))
        {
            return Vec::new();
        }
        shared
    };
    if mass <= 0.0 {
        return if taken.is_empty() {
            Err(Doubt::NothingSays)
        } else {
            Ok(Recall::Done { confidence: 0.5 })
        };
    }
    let mut candidates: Vec<Candidate> = Vec::new();
    for page in pages {
        for w in page
            .widgets
            .iter()
            .filter(|w| actionable(w) && !used.contains(w.text.as_str()) && !is_cancel(&w.text))
        {
            let own = label_words(stable_part(&w.text));
            let mut named = own
                .iter()
                .filter(|x| !x.chars().all(|c| c.is_ascii_digit()));
            if named.clone().next().is_some() && named.all(|x| typed.contains(x)) {
                continue;
            }
            // Only the name counts: the value a setting shows is what it is now, not what is asked.
            let overlap: f64 = says(&w.text).iter().map(|x| idf(x)).sum();
            if overlap > 0.0 {
                candidates.push(Candidate {
                    page: &page.page_id,
                    widget: w,
                    share: overlap / mass,
                });
            }
        }
    }
    candidates.sort_by(|a, b| {
        b.share
            .total_cmp(&a.share)
            .then_with(|| (b.page == current_page).cmp(&(a.page == current_page)))
    });
    let best_share = candidates.first().map_or(0.0, |c| c.share);
    let closing = closing_labels(app);
    let arrived = taken.last().is_some_and(|s| s.to_page == current_page);
    // An instruction opens with what to do ("change", "set", "打开"); once steps were taken, that
    // word alone left unsaid asks for nothing more, unless a widget says it well ("call Alice":
    // "Call number" is the task itself).
    let verb: HashSet<String> = intent
        .split_whitespace()
        .next()
        .map(label_words)
        .unwrap_or_default();
    let only_the_verb_left =
        !taken.is_empty() && remaining.iter().all(|w| verb.contains(w)) && best_share < MIN_SHARE;
    tracing::debug!(
        intent,
        current_page,
        remaining = ?remaining,
        best = ?candidates.first().map(|c| (stable_part(&c.widget.text), round(c.share))),
        "labels weighed"
    );
    if best_share < DONE_BELOW || only_the_verb_left {
        if !arrived {
            return Err(Doubt::Elsewhere);
        }
        let last = taken.last().expect("arrived implies a step");
        // A toggle whose label says most of the instruction was the task itself.
        let toggled = last.from_page == current_page && last.action.action_type != "input";
        let toggle_said: f64 = label_words(stable_part(&last.action.widget_text))
            .intersection(&asked)
            .filter(|w| df.contains_key(*w))
            .map(|w| idf(w))
            .sum();
        if toggled && toggle_said >= mass * MOST {
            return Ok(Recall::Done {
                confidence: round(toggle_said / mass),
            });
        }
        // The last step opened a page with one field (a search box, a name dialog): the value the
        // instruction names and nobody typed yet goes in it.
        let opened_now = last.from_page != current_page
            && !taken[..taken.len() - 1]
                .iter()
                .any(|s| s.from_page == current_page);
        if opened_now {
            if let Some(recall) = type_value(app, intent, taken, current_page) {
                return Ok(recall);
            }
        }
        // A choice made inside a page (a dialog's option) is usually confirmed by leaving it the
        // way remembered tasks left it, or the way they confirm choices elsewhere in the app.
        let small = app.page(current_page).is_some_and(is_small);
        // A setting toggled on a screen is done by the toggle; only a dialog waits to be left.
        if last.from_page == current_page && small {
            if let Some(exit) = usual_exit(app, current_page) {
                return Ok(Recall::Act {
                    expected_page: exit.to_page.clone(),
                    action: exit.action.clone(),
                    remaining: 1,
                    confidence: 0.6,
                });
            }
            if let Some(confirm) = usual_confirmation(app, current_page) {
                return Ok(tapping(confirm, current_page, 0.5));
            }
        }
        // A page that still waits to be closed ("Save", "OK", "Allow"), when this task did not
        // just close one: close it the way the app's remembered tasks close pages.
        let just_closed = closing.contains_key(last.action.widget_text.as_str())
            || is_commit(&last.action.widget_text);
        // Opening an item (a conversation, a contact) leaves nothing to commit.
        let opened_item = last.from_page != current_page && is_row(&last.action.widget_text);
        if !just_closed && !opened_item {
            if let Some(close) = closing_widget(app, current_page, &closing)
                .or_else(|| commit_widget(app, current_page))
            {
                return Ok(tapping(close, current_page, 0.5));
            }
        }
        // A small page the last step just opened (a confirmation, a chooser) is rarely where a
        // task ends; without a remembered way to close it, ask rather than stop.
        if opened_now && small {
            return Err(Doubt::NotDone);
        }
        // Something here still says part of what was asked, if only a little: not clearly done.
        if candidates
            .iter()
            .any(|c| c.page == current_page && c.share >= DONE_BELOW / 2.0)
        {
            return Err(Doubt::NotDone);
        }
        return Ok(Recall::Done {
            confidence: round(1.0 - best_share),
        });
    }
    // Each goal is weighed with the way to it: the labels tapped on the way say part of the
    // instruction too ("Customize colors", then "Theme", then "Light"). Routes are compared by
    // their first step, which is all an answer commits to.
    let visited: HashSet<&str> = taken.iter().map(|s| s.from_page.as_str()).collect();
    let here_labels: HashSet<&str> = candidates
        .iter()
        .filter(|c| c.page == current_page)
        .map(|c| stable_part(&c.widget.text))
        .collect();
    let named_row_here = app.page(current_page).is_some_and(|p| {
        p.widgets
            .iter()
            .any(|w| actionable(w) && is_row(&w.text) && !says(&w.text).is_empty())
    });
    let mut order: HashMap<String, usize> = HashMap::new();
    // The act each part opens with ("open", "change") says how, not what: it has no place.
    for word in instruction_parts
        .iter()
        .flat_map(|c| words(c).into_iter().skip(1))
        .flat_map(|w| label_words(&w))
    {
        let next = order.len();
        order.entry(word).or_insert(next);
    }
    // The share of a goal's own words the instruction asks for: "Light" is all "light", "Auto
    // light / dark" a third of it.
    let fit = |goal: &Candidate| {
        let own = label_words(stable_part(&goal.widget.text));
        own.iter().filter(|w| asked.contains(*w)).count() as f64 / own.len().max(1) as f64
    };
    let mut routes: Vec<Route> = Vec::new();
    for goal in candidates.iter().take(MAX_GOALS) {
        // A widget that is here is tapped here, not reached again somewhere else.
        if goal.page != current_page && here_labels.contains(stable_part(&goal.widget.text)) {
            continue;
        }
        let mut said_on_the_way: HashSet<String> = says(&goal.widget.text).into_iter().collect();
        let (first, here) = if goal.page == current_page {
            (None, true)
        } else {
            let Ok(plan) = app.plan(current_page, goal.page, MAX_ROUTE_STEPS) else {
                continue;
            };
            let Some(&step) = plan.steps.first() else {
                continue;
            };
            // Going back where this task has been is undoing it, not progress.
            if visited.contains(app.transitions()[step].to_page.as_str())
                || is_cancel(&app.transitions()[step].action.widget_text)
            {
                continue;
            }
            // A step that does something of its own (calls, deletes, sends) is no way to
            // somewhere else unless the task asks for that act.
            let acts = label_words(stable_part(&app.transitions()[step].action.widget_text));
            if acts
                .iter()
                .any(|w| SIDE_EFFECT_ACTS.contains(&w.as_str()) && !asked.contains(w))
            {
                continue;
            }
            // A dialog is confirmed last: not while something on it still says part of the task.
            if is_commit(&app.transitions()[step].action.widget_text) && !here_labels.is_empty() {
                continue;
            }
            // Through a list row the instruction does not name, while it names a row here
            // ("Alice" for "rename the chat with Alice"): the way was seen through a sibling.
            let through = &app.transitions()[step].action.widget_text;
            if is_row(through) && says(through).is_empty() && named_row_here {
                continue;
            }
            for s in &plan.steps {
                said_on_the_way.extend(says(&app.transitions()[*s].action.widget_text));
            }
            (Some(&app.transitions()[step]), false)
        };
        let key = match first {
            Some(t) => t.action.widget_key().to_string(),
            None => goal.widget.text.clone(),
        };
        let score = said_on_the_way.iter().map(|w| weight(w)).sum::<f64>() / remaining_mass;
        let earliest = said_on_the_way
            .iter()
            .filter_map(|w| order.get(w))
            .min()
            .copied()
            .unwrap_or(usize::MAX);
        // One way per first step: the goal saying most, and of equals the one fitting best.
        match routes.iter_mut().find(|r| r.key == key) {
            Some(r) if r.score > score || (r.score == score && fit(r.goal) >= fit(goal)) => {}
            Some(r) => {
                *r = Route {
                    key,
                    score,
                    goal,
                    first,
                    here,
                    said: said_on_the_way.len(),
                    said_words: said_on_the_way.iter().cloned().collect(),
                    earliest,
                }
            }
            None => routes.push(Route {
                key,
                score,
                goal,
                first,
                here,
                said: said_on_the_way.len(),
                said_words: said_on_the_way.iter().cloned().collect(),
                earliest,
            }),
        }
    }
    let fit = |r: &Route| fit(r.goal);
    routes.sort_by(|a, b| {
        b.score
            .total_cmp(&a.score)
            .then_with(|| b.here.cmp(&a.here))
            .then_with(|| fit(b).total_cmp(&fit(a)))
    });
    // Ways that say the same words compete as one when one goal fits clearly better: it speaks
    // for them. Goals that fit as well stay rivals ("Save as PDF", "Save to PDF").
    let outfitted: Vec<bool> = routes
        .iter()
        .map(|r| {
            routes.iter().any(|other| {
                other.said_words == r.said_words
                    && (other.score - r.score).abs() < 1e-9
                    && fit(other) > fit(r)
            })
        })
        .collect();
    let mut outfitted = outfitted.into_iter();
    routes.retain(|_| !outfitted.next().unwrap_or(false));
    tracing::debug!(
        intent,
        current_page,
        remaining = ?remaining,
        routes = ?routes
            .iter()
            .take(4)
            .map(|r| (r.key.as_str(), stable_part(&r.goal.widget.text), round(r.score)))
            .collect::<Vec<_>>(),
        "ways weighed"
    );
    let Some(best) = routes.first() else {
        // Nothing further is in reach from here: a dialog the task filled in or chose on is
        // confirmed, and a permission the task ran into is granted.
        let acted_here = taken.iter().any(|s| s.from_page == current_page);
        let just_opened = taken
            .last()
            .is_some_and(|s| s.from_page != current_page && s.to_page == current_page);
        let press = if acted_here {
            commit_widget(app, current_page)
        } else if just_opened {
            allow_widget(app, current_page)
        } else {
            None
        };
        return press
            .map(|w| tapping(w, current_page, 0.5))
            .ok_or(Doubt::NoWay);
    };
    let runner_up = routes.get(1).map_or(0.0, |r| r.score);
    // Two settings that differ only in their current value ("Max reminder duration<br>5 minutes"
    // in two sections) are the same words: the instruction cannot tell them apart.
    let name = stable_part(&best.goal.widget.text);
    let ambiguous = candidates.iter().any(|c| c.widget.text != best.goal.widget.text && stable_part(&c.widget.text) == name && c.share >= best.goal.share - MIN_MARGIN)
        || app.page(best.goal.page).is_some_and(|p| p.widgets.iter().filter(|w| stable_part(&w.text) == name).count() > 1)
        // The same holds for the first step of the way there, which is what the answer taps.
        || best.first.is_some_and(|t| {
            let first = stable_part(&t.action.widget_text);
            !first.is_empty() && app.page(current_page).is_some_and(|p| p.widgets.iter().filter(|w| stable_part(&w.text) == first).count() > 1)
        });
    // Once the task is under way, one word in common with a label that is mostly about something
    // else ("show" in "Show hidden items" for "disable showing the tabs") is a coincidence; a
    // label the instruction mostly says ("Yearly view", "Medium") is the choice it asks for.
    let goal_words = label_words(stable_part(&best.goal.widget.text));
    let chose_here = taken
        .last()
        .is_some_and(|s| s.from_page == current_page && s.to_page == current_page);
    let coincidence = !taken.is_empty()
        && best.said == 1
        && (goal_words.iter().filter(|w| asked.contains(*w)).count() * 2 < goal_words.len()
        // Right after a choice on this page, a second option here that says one word is more
        // likely the choice's sibling than a second choice asked for, unless the instruction
        // names it whole ("Descending" of "sort by date in descending order").
        || (chose_here && best.here && !goal_words.iter().all(|w| remaining.contains(w))));
    let best_label = stable_part(&best.goal.widget.text).to_string();
    if ambiguous {
        return Err(Doubt::SameLabel(best_label));
    }
    if coincidence {
        return Err(Doubt::Coincidence(best_label));
    }
    if best.score < MIN_SHARE {
        return Err(Doubt::NothingSays);
    }
    // Two ways about as good: the one saying what the instruction says first goes first,
    // as the instruction was written in the order it is done.
    let close: Vec<&Route> = routes[1..]
        .iter()
        .filter(|r| best.score - r.score < MIN_MARGIN)
        .collect();
    let first_in_order = close.iter().all(|r| best.earliest < r.earliest);
    if best.score - runner_up < MIN_MARGIN && !first_in_order {
        let other = routes.get(1).map_or(String::new(), |r| {
            stable_part(&r.goal.widget.text).to_string()
        });
        return Err(Doubt::TooClose(best_label, other));
    }
    let margin = (1.0 - runner_up / best.score.max(f64::EPSILON)).clamp(0.0, 1.0);
    // A way chosen for coming first in the instruction, not for its margin, is half sure.
    let confidence =
        round(best.score.min(1.0) * margin.max(if first_in_order { 0.5 } else { 0.0 }));
    match best.first {
        None => act_on(best.goal.widget, intent, taken, current_page, confidence)
            .ok_or_else(|| Doubt::NoValue(stable_part(&best.goal.widget.text).to_string())),
        Some(t) => Ok(Recall::Act {
            action: t.action.clone(),
            expected_page: t.to_page.clone(),
            remaining: 2,
            confidence,
        }),
    }
}

/// The words of the instruction the session has said by what it did: the labels it tapped, the
/// page it reached, what it typed.
fn said_so_far(
    app: &AppGraph,
    template: &Template,
    taken: &[TraceStep],
    current_page: &str,
) -> HashSet<String> {
    // What a tapped setting showed under its name ("Font size<br>Medium") was its old value,
    // not a choice made: only the name counts as said.
    let mut said: HashSet<String> = taken
        .iter()
        .flat_map(|s| label_words(stable_part(&s.action.widget_text)))
        .collect();
    // Once the task has moved, the page it reached says where it is: its title and section
    // headings ("LIST VIEW", "Contacts") name the place, and an instruction's words for that place
    // ("in the list view") are satisfied by being there, not by tapping something else.
    if !taken.is_empty() {
        if let Some(page) = app.page(current_page) {
            said.extend(
                page.widgets
                    .iter()
                    .filter(|w| !actionable(w))
                    .flat_map(|w| label_words(&w.text)),
            );
        }
    }
    // What the session typed is said, and so is all the instruction says up to the last value
    // typed: instructions give their parts in order ("mobile number" of "…, mobile number
    // 12345678900" once the number is in).
    said.extend(taken.iter().flat_map(|s| label_words(&s.action.input_text)));
    let last_typed = template.values.iter().rposition(|v| {
        let v = v.to_lowercase();
        taken.iter().any(|s| {
            let typed = s.action.input_text.to_lowercase();
            !typed.is_empty() && (v.starts_with(&typed) || typed.starts_with(&v))
        })
    });
    if let Some(k) = last_typed {
        // An option still on offer here is chosen, not typed: a form may ask for the name first
        // and the kind after ("a checklist note called 'x'").
        let options_here: HashSet<String> = app
            .page(current_page)
            .map(|p| {
                p.widgets
                    .iter()
                    .filter(|w| is_choice(w))
                    .flat_map(|w| label_words(stable_part(&w.text)))
                    .collect()
            })
            .unwrap_or_default();
        said.extend(
            (0..=k)
                .flat_map(|j| template.cue(j))
                .flat_map(|w| label_words(w))
                .filter(|w| !options_here.contains(w)),
        );
    }
    said
}

struct Route<'a> {
    key: String,
    score: f64,
    goal: &'a Candidate<'a>,
    /// The first step of the way to the goal's page; `None` when the goal is on this page.
    first: Option<&'a atlas_model::Transition>,
    here: bool,
    /// How many of the remaining words the way says.
    said: usize,
    /// Where the first word the way says stands in the instruction.
    earliest: usize,
    /// The remaining words the way says.
    said_words: std::collections::BTreeSet<String>,
}

/// How remembered tasks (sessions with an intent) left `page` for another page, when one way
/// clearly dominates (two thirds or more of the times).
fn usual_exit<'a>(app: &'a AppGraph, page: &str) -> Option<&'a TraceStep> {
    let mut counts: HashMap<&str, (usize, &TraceStep)> = HashMap::new();
    let mut total = 0;
    for step in app
        .traces()
        .filter(|t| !t.intent.is_empty())
        .flat_map(|t| &t.steps)
    {
        if step.from_page == page && step.to_page != page && step.success {
            total += 1;
            counts
                .entry(step.action.widget_key())
                .or_insert((0, step))
                .0 += 1;
        }
    }
    let (count, step) = counts.values().max_by_key(|(c, _)| *c)?;
    (*count * 3 >= total * 2).then_some(*step)
}

/// The widget of `page` whose label remembered tasks of this app most often used to leave a page
/// right after a choice made inside it (a dialog's "OK"), if one label clearly leads.
fn usual_confirmation<'a>(app: &'a AppGraph, page: &str) -> Option<&'a Widget> {
    let mut counts: HashMap<&str, usize> = HashMap::new();
    for trace in app.traces().filter(|t| !t.intent.is_empty()) {
        for pair in trace.steps.windows(2) {
            let (choice, leave) = (&pair[0], &pair[1]);
            if choice.from_page == choice.to_page
                && leave.from_page == choice.to_page
                && leave.to_page != leave.from_page
            {
                *counts.entry(leave.action.widget_text.as_str()).or_default() += 1;
            }
        }
    }
    let widgets = &app.page(page)?.widgets;
    clear_leader(widgets, &counts)
}

/// Labels the app's remembered tasks used to close a page: steps that return to a page visited
/// earlier in the same task, seen at least twice, leaving out what nearly every page shows
/// (a Back key).
fn closing_labels(app: &AppGraph) -> HashMap<&str, usize> {
    let mut counts: HashMap<&str, usize> = HashMap::new();
    for trace in app.traces().filter(|t| !t.intent.is_empty()) {
        for (i, step) in trace.steps.iter().enumerate() {
            let returns = trace.steps[..i]
                .iter()
                .any(|earlier| earlier.from_page == step.to_page);
            if returns && step.to_page != step.from_page && !step.action.widget_text.is_empty() {
                *counts.entry(step.action.widget_text.as_str()).or_default() += 1;
            }
        }
    }
    let pages = app.pages().len().max(1);
    counts.retain(|label, count| {
        let everywhere = app
            .pages()
            .iter()
            .filter(|p| p.widgets.iter().any(|w| w.text == *label))
            .count()
            * 5
            >= pages * 4;
        *count >= 2 && !everywhere
    });
    counts
}

fn is_cancel(label: &str) -> bool {
    let label = stable_part(label).to_lowercase();
    CANCEL_LABELS.contains(&label.as_str())
}

pub(crate) fn is_commit(label: &str) -> bool {
    let label = stable_part(label).to_lowercase();
    COMMIT_LABELS.contains(&label.as_str())
}

/// The one widget on `page` whose label commits (see [`COMMIT_LABELS`]), if there is exactly one.
fn commit_widget<'a>(app: &'a AppGraph, page: &str) -> Option<&'a Widget> {
    let mut commits = app
        .page(page)?
        .widgets
        .iter()
        .filter(|w| is_commit(&w.text));
    let first = commits.next()?;
    commits.next().is_none().then_some(first)
}

/// The one widget of a small page that grants a permission.
fn allow_widget<'a>(app: &'a AppGraph, page: &str) -> Option<&'a Widget> {
    let page = app.page(page)?;
    if !is_small(page) {
        return None;
    }
    let mut allows = page.widgets.iter().filter(|w| {
        let label = stable_part(&w.text).to_lowercase();
        ALLOW_LABELS.contains(&label.as_str())
    });
    let first = allows.next()?;
    allows.next().is_none().then_some(first)
}

/// The one closing widget on `page` (the most used, when it clearly leads).
fn closing_widget<'a>(
    app: &'a AppGraph,
    page: &str,
    closing: &HashMap<&str, usize>,
) -> Option<&'a Widget> {
    clear_leader(&app.page(page)?.widgets, closing)
}

/// The widget whose label was counted most, when it was counted at least twice as often as the
/// next one on the page.
fn clear_leader<'a>(widgets: &'a [Widget], counts: &HashMap<&str, usize>) -> Option<&'a Widget> {
    let mut present: Vec<(usize, &Widget)> = widgets
        .iter()
        .filter_map(|w| counts.get(w.text.as_str()).map(|c| (*c, w)))
        .collect();
    present.sort_by_key(|(count, _)| std::cmp::Reverse(*count));
    match present.as_slice() {
        [(c, w), rest @ ..] if rest.first().is_none_or(|(d, _)| *c >= 2 * *d) => Some(*w),
        _ => None,
    }
}

/// The instruction without the app's own name ("… in the Calendar app", "… of the File manager
/// app"): it says where, not what, and would otherwise pull towards any label mentioning apps.
/// A name is a run of up to three words ending before "app" or "application" and starting with a
/// capital that does not start the sentence.
fn without_app_name(intent: &str) -> String {
    let words: Vec<&str> = intent.split_whitespace().collect();
    let mut keep = vec![true; words.len()];
    for (i, w) in words.iter().enumerate() {
        let bare = w
            .trim_matches(|c: char| !c.is_alphanumeric())
            .to_ascii_lowercase();
        if bare != "app" && bare != "application" {
            continue;
        }
        let start = (i.saturating_sub(3)..i)
            .find(|&j| j > 0 && words[j].chars().next().is_some_and(char::is_uppercase));
        if let Some(start) = start {
            keep[start..=i].iter_mut().for_each(|k| *k = false);
        }
    }
    words
        .iter()
        .zip(keep)
        .filter(|(_, k)| *k)
        .map(|(w, _)| *w)
        .collect::<Vec<_>>()
        .join(" ")
}

/// The instruction without what it says things are now: in "change the view from monthly to
/// yearly", "monthly" is where the setting stands, "yearly" the goal.
fn without_current_state(intent: &str) -> String {
    let words: Vec<&str> = intent.split_whitespace().collect();
    let bare = |w: &str| {
        w.trim_matches(|c: char| !c.is_alphanumeric())
            .to_ascii_lowercase()
    };
    let Some(from) = words.iter().position(|w| bare(w) == "from") else {
        return intent.to_string();
    };
    let Some(to) = words[from + 1..]
        .iter()
        .position(|w| bare(w) == "to")
        .map(|i| i + from + 1)
    else {
        return intent.to_string();
    };
    words[..from]
        .iter()
        .chain(&words[to..])
        .copied()
        .collect::<Vec<_>>()
        .join(" ")
}

/// The parts of an instruction in the order it gives them: split at commas, semicolons, "and",
/// "then" and their Chinese counterparts, outside quoted values.
fn clauses(intent: &str) -> Vec<String> {
    let mut parts = vec![String::new()];
    let mut quote: Option<char> = None;
    for c in intent.chars() {
        match quote {
            Some(q) if c == q => quote = None,
            Some(_) => {}
            None if matches!(c, '\'' | '"' | '‘' | '“' | '「') => {
                quote = Some(match c {
                    '‘' => '’',
                    '“' => '”',
                    '「' => '」',
                    other => other,
                })
            }
            None if matches!(c, ',' | ';' | '，' | '；' | '。' | '、') => {
                parts.push(String::new());
                continue;
            }
            None => {}
        }
        parts.last_mut().expect("never empty").push(c);
    }
    parts
        .iter()
        .flat_map(|p| {
            p.split(" and ")
                .flat_map(|q| q.split(" then "))
                .flat_map(|q| q.split("然后"))
                .flat_map(|q| q.split("并且"))
                .map(str::to_string)
                .collect::<Vec<_>>()
        })
        .filter(|p| !p.trim().is_empty())
        .collect()
}

/// A widget that picks one of several options (a checkbox, a radio button, a switch).
fn is_choice(w: &Widget) -> bool {
    let t = w.widget_type.to_ascii_lowercase();
    ["check", "radio", "switch", "toggle"]
        .iter()
        .any(|k| t.contains(k))
}

/// A row of a list (a name with lines under it: "Alice<br>Hello<br>30.06").
fn is_row(label: &str) -> bool {
    label.contains("<br>")
}

/// A label without the value a setting shows under it (`Font size<br>100%` → `Font size`).
pub(crate) fn stable_part(label: &str) -> &str {
    label.split("<br>").next().unwrap_or(label).trim()
}

fn round(x: f64) -> f64 {
    (x * 1000.0).round() / 1000.0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn what_things_are_now_is_not_the_goal() {
        assert_eq!(
            without_current_state("change the view from monthly to yearly"),
            "change the view to yearly"
        );
        assert_eq!(without_current_state("sort by size"), "sort by size");
    }

    #[test]
    fn an_instruction_splits_into_parts_in_order() {
        assert_eq!(
            clauses("open 'android, old' folder, sort the files and save it"),
            vec!["open 'android, old' folder", " sort the files", "save it"]
        );
        assert_eq!(clauses("新建笔记然后保存"), vec!["新建笔记", "保存"]);
    }

    #[test]
    fn the_app_name_is_context() {
        assert_eq!(
            without_app_name("Use 24 hour formats in the Calendar app"),
            "Use 24 hour formats in the"
        );
        assert_eq!(
            without_app_name("change font size of the File manager app to large"),
            "change font size of the to large"
        );
        assert_eq!(without_app_name("Sort apps by title"), "Sort apps by title");
        assert_eq!(
            without_app_name("Disable closing this app when launching"),
            "Disable closing this app when launching"
        );
    }
}
