//! Typing the instruction's values: which field takes which value, and when.
//!
//! People type right after tapping a field and fill a form in the order it shows its fields, so
//! the field is chosen by the session's last step and by what the current page shows, never by a
//! guess across the app: the field just tapped; a field that shows a value the instruction
//! replaces ("rename 'diary' to 'events'"); the next field in order when the words before the
//! value name it ("mobile number 12345678900", "search 'Clock'"); the field a tapped label
//! revealed ("Search"); the one field of a dialog, or the first of a form, that the last step
//! opened.

use std::collections::HashSet;

use atlas_graph::AppGraph;
use atlas_model::{Action, TraceStep, Widget};
use atlas_text::Template;

use super::facts::{is_commit, is_input, is_small, plain_words, stable_part};
use crate::memory::Recall;

/// Words that say the value after them is a name, in English (as stemmed) and Chinese.
const NAMING: &[&str] = &[
    "name", "call", "titl", "label", "名为", "名叫", "叫做", "命名", "标题", "名称",
];
/// A bare number this long is an identifier to type (a phone number), not an option to pick.
const TYPED_DIGITS: usize = 5;

/// The value typing into `field` should enter, and its place among the instruction's values.
pub(crate) struct Value {
    pub(crate) index: usize,
    pub(crate) text: String,
}

/// The instruction's first value not used yet: not typed (in full or in part), not picked as a
/// widget's label, not what `field` already shows. `typed_only` keeps to values meant to be typed
/// (quoted, or long numbers), since short bare numbers are more often options to pick.
pub(crate) fn next_value(
    template: &Template,
    taken: &[TraceStep],
    field: &Widget,
    typed_only: bool,
) -> Option<Value> {
    let contains =
        |a: &str, b: &str| !a.is_empty() && !b.is_empty() && (a.contains(b) || b.contains(a));
    // Typed text is the value or its start ("classmate" for "classmate.vcf"), never a part of
    // another value ("234" is not typed by typing "12345678").
    let begins =
        |a: &str, b: &str| !a.is_empty() && !b.is_empty() && (a.starts_with(b) || b.starts_with(a));
    let used = |v: &str| {
        let v = v.to_lowercase();
        contains(&field.text.trim().to_lowercase(), &v)
            || taken.iter().any(|s| {
                begins(&s.action.input_text.to_lowercase(), &v)
                    || s.action.widget_text.to_lowercase().contains(&v)
            })
    };
    template
        .values
        .iter()
        .zip(&template.quoted)
        .enumerate()
        .find(|(k, (v, quoted))| {
            let typed = **quoted || v.chars().filter(char::is_ascii_digit).count() >= TYPED_DIGITS;
            (typed || !typed_only) && !replaced(template, *k) && !used(v)
        })
        .map(|(index, (v, _))| Value {
            index,
            text: as_typed(v, field),
        })
}

/// Whether value `k` is what the next value replaces: two values with nothing but function words
/// between them ("from '222222' to '12345678900'", "rename 'diary' to 'events'") name the old and
/// the new.
fn replaced(template: &Template, k: usize) -> bool {
    k + 1 < template.values.len() && template.cue(k + 1).is_empty()
}

/// What value `k` is for: the words said before it, or before the value it replaces.
fn cue(template: &Template, k: usize) -> HashSet<&String> {
    let mut k = k;
    while k > 0 && template.cue(k).is_empty() && replaced(template, k - 1) {
        k -= 1;
    }
    template.cue(k).iter().collect()
}

/// A file name goes into a field showing a name without extension as its stem: the dialog adds
/// the extension it exports ("classmate.vcf" into `contacts_2023_07_01`).
fn as_typed(value: &str, field: &Widget) -> String {
    if let Some((stem, ext)) = value.rsplit_once('.') {
        let extension = !stem.is_empty()
            && (1..=5).contains(&ext.len())
            && ext.chars().all(|c| c.is_ascii_alphanumeric())
            && ext.chars().any(|c| c.is_ascii_alphabetic());
        if extension && !field.text.contains('.') && !field.text.trim().is_empty() {
            return stem.to_string();
        }
    }
    value.to_string()
}

pub(crate) fn typing(field: &Widget, value: Value, page: &str, confidence: f64) -> Recall {
    Recall::Act {
        action: Action {
            action_type: "input".into(),
            widget_id: field.id.clone(),
            widget_text: field.text.clone(),
            input_text: value.text,
            ..Default::default()
        },
        expected_page: page.to_string(),
        remaining: 1,
        confidence,
        way: None,
        checked: None,
    }
}

fn same_widget(action: &Action, w: &Widget) -> bool {
    if action.widget_text.trim().is_empty() {
        !action.widget_id.is_empty() && action.widget_id == w.id
    } else {
        action.widget_text.trim() == w.text.trim()
    }
}

/// What to type on `current_page` for `intent` after the steps `taken`, when the last step makes
/// the field clear.
pub(crate) fn fill_in(
    app: &AppGraph,
    intent: &str,
    taken: &[TraceStep],
    current_page: &str,
) -> Option<Recall> {
    let last = taken.last();
    if last.is_some_and(|s| s.to_page != current_page) {
        return None;
    }
    let page = app.page(current_page)?;
    let inputs: Vec<&Widget> = page.widgets.iter().filter(|w| is_input(w)).collect();
    if inputs.is_empty() {
        return None;
    }
    let template = Template::of(intent);
    let typed_here = |w: &Widget| {
        taken.iter().any(|s| {
            s.from_page == current_page
                && s.action.action_type == "input"
                && same_widget(&s.action, w)
        })
    };
    // The field just tapped is about to be typed in.
    if let Some(last) =
        last.filter(|s| s.from_page == current_page && s.action.action_type != "input")
        && let Some(field) = inputs.iter().find(|w| same_widget(&last.action, w))
    {
        return next_value(&template, taken, field, false)
            .map(|v| typing(field, v, current_page, 0.8));
    }
    // A field showing a value the instruction names holds what is to be replaced: the value
    // named after it goes in.
    for field in &inputs {
        let shown = field.text.trim();
        let Some(at) = template
            .values
            .iter()
            .position(|v| v.trim().eq_ignore_ascii_case(shown))
        else {
            continue;
        };
        if let Some(value) = next_value(&template, taken, field, false).filter(|v| v.index > at) {
            return Some(typing(field, value, current_page, 0.7));
        }
    }
    // What the session tapped names things that exist; a field showing one is filled already.
    let tapped_names: HashSet<String> = taken
        .iter()
        .filter(|s| s.action.action_type != "input")
        .map(|s| stable_part(&s.action.widget_text).to_lowercase())
        .collect();
    let filled = |w: &Widget| {
        let shown = stable_part(&w.text).to_lowercase();
        typed_here(w)
            || tapped_names.contains(&shown)
            || template
                .values
                .iter()
                .any(|v| v.trim().to_lowercase() == shown)
    };
    let first_open = inputs.iter().find(|w| !filled(w))?;
    let value = next_value(&template, taken, first_open, true)?;
    // The next field in order, when the words before the value name it, or the last tap's label
    // does ("Search" revealing a search box).
    let field_words = plain_words(&first_open.text);
    let tapped_words: HashSet<String> = tapped_names.iter().flat_map(|n| plain_words(n)).collect();
    let said_before = cue(&template, value.index);
    let cue: HashSet<&String> = said_before
        .iter()
        .copied()
        .filter(|w| !tapped_words.contains(*w))
        .collect();
    let tapped = last
        .filter(|s| s.action.action_type != "input")
        .map(|s| plain_words(&s.action.widget_text))
        .unwrap_or_default();
    if field_words
        .iter()
        .any(|w| cue.contains(w) || tapped.contains(w))
    {
        return Some(typing(first_open, value, current_page, 0.7));
    }
    // The last step opened this page: its one field if it is a dialog, its first if a form.
    let last = last?;
    let opened_now =
        last.from_page != current_page && !taken.iter().any(|s| s.from_page == current_page);
    let small = is_small(page);
    // A page with one field and a button to confirm it is a dialog asking for that field.
    let asks_to_confirm = page.widgets.iter().any(|w| is_commit(&w.text));
    // A value the pages this session went through show as a label names something that exists
    // (a note to delete, a contact to open), not text to fill a new page with.
    let shown = std::iter::once(current_page)
        .chain(taken.iter().map(|s| s.from_page.as_str()))
        .filter_map(|p| app.page(p))
        .flat_map(|p| &p.widgets)
        .any(|w| {
            !is_input(w)
                && w.text
                    .split("<br>")
                    .next()
                    .is_some_and(|l| l.trim().eq_ignore_ascii_case(&value.text))
        });
    let form = inputs.len() >= 2 && !typed_here(inputs[0]);
    // A name, not a number, and not one meant for another field the words name.
    let quoted = template.quoted[value.index];
    let for_another = inputs
        .iter()
        .any(|w| plain_words(&w.text).iter().any(|x| cue.contains(x)));
    // ...and the value belongs to what the opening tap started ("New Event" for "create an
    // event 'laundry'"), not to a page reached on the way ("Edit contact").
    let opened_by = plain_words(&last.action.widget_text);
    // Opening a list row (a conversation, a contact) starts nothing new to name.
    let started_here = !last.action.widget_text.contains("<br>")
        && opened_by.iter().any(|w| said_before.contains(w));
    // Unless the instruction says the value is a name ("called 'test'"): then it is typed
    // though something of that name exists.
    let naming = said_before.iter().any(|w| NAMING.contains(&w.as_str()));
    let shown = shown && !naming;
    if opened_now
        && quoted
        && started_here
        && !for_another
        && !shown
        && ((inputs.len() == 1 && (small || asks_to_confirm)) || form)
        && std::ptr::eq(*first_open, inputs[0])
    {
        return Some(typing(first_open, value, current_page, 0.6));
    }
    None
}

/// Typing the instruction's next unused quoted value, when `page` has exactly one field.
pub(crate) fn type_value(
    app: &AppGraph,
    intent: &str,
    taken: &[TraceStep],
    page: &str,
) -> Option<Recall> {
    let mut inputs = app.page(page)?.widgets.iter().filter(|w| is_input(w));
    let field = inputs.next()?;
    if inputs.next().is_some() {
        return None;
    }
    let value = next_value(&Template::of(intent), taken, field, true)?;
    Some(typing(field, value, page, 0.6))
}
