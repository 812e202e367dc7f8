//! What the app's remembered tasks say about leaving pages: the usual way out of a page, the
//! usual confirmation after a choice, the labels that close pages, and the one widget that
//! commits or grants on a page. Habits of the app, learned from its own traces.

use std::collections::HashMap;

use atlas_graph::AppGraph;
use atlas_model::{TraceStep, Widget};

use super::facts::{is_allow, is_commit, is_small};

/// How remembered tasks (sessions with an intent) left `page` for another page, when one way
/// clearly dominates (two thirds or more of the times).
pub(crate) fn usual_exit<'a>(app: &'a AppGraph, page: &str) -> Option<&'a TraceStep> {
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
pub(crate) fn usual_confirmation<'a>(app: &'a AppGraph, page: &str) -> Option<&'a Widget> {
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
pub(crate) fn closing_labels(app: &AppGraph) -> HashMap<&str, usize> {
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

/// The one widget on `page` whose label commits (see [`is_commit`]), if there is exactly one.
pub(crate) fn commit_widget<'a>(app: &'a AppGraph, page: &str) -> Option<&'a Widget> {
    let mut commits = app
        .page(page)?
        .widgets
        .iter()
        .filter(|w| is_commit(&w.text));
    let first = commits.next()?;
    commits.next().is_none().then_some(first)
}

/// The one widget of a small page that grants a permission.
pub(crate) fn allow_widget<'a>(app: &'a AppGraph, page: &str) -> Option<&'a Widget> {
    let page = app.page(page)?;
    if !is_small(page) {
        return None;
    }
    let mut allows = page.widgets.iter().filter(|w| is_allow(&w.text));
    let first = allows.next()?;
    allows.next().is_none().then_some(first)
}

/// The one closing widget on `page` (the most used, when it clearly leads).
pub(crate) fn closing_widget<'a>(
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
