//! Plain facts about widgets and labels that every part of grounding reads the same way: what can
//! be acted on, what a field is, what commits, dismisses or grants, what a label says.
//!
//! Each word list here states a convention of the platforms (Android, HarmonyOS, the web) in
//! English and Chinese, not the vocabulary of any one app.

use std::collections::HashSet;

use atlas_model::{Page, Widget};
use atlas_text::words;

/// A page with at most this many actionable widgets is a dialog rather than a screen.
const SMALL_PAGE: usize = 5;

/// Labels that commit what a page holds (a dialog's choice, a form, a colour picked).
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
/// Labels that dismiss what a page offers: pressing one undoes the step that opened the page.
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
/// Words interfaces use for the same act, in English (as stemmed) and Chinese: an instruction's
/// "add" is a button's "New", its "call" a "Dial".
const SAME_ACT: &[&[&str]] = &[
    &["add", "new", "creat", "添加", "新建", "创建", "新增"],
    &["delet", "remov", "删除", "移除"],
    &["call", "dial", "拨打", "呼叫"],
    &["edit", "modifi", "编辑", "修改"],
];
/// Acts with effects of their own (as [`label_words`] reads them): calling, deleting, sending.
const SIDE_EFFECT_ACTS: &[&str] = &["call", "delet", "send", "发送"];

/// A label's words as grounding compares them: stemmed, and the same act read as one word.
pub(crate) fn label_words(text: &str) -> HashSet<String> {
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

/// A label's words as values are cued: plain, without reading acts as one.
pub(crate) fn plain_words(text: &str) -> HashSet<String> {
    words(&text.replace("<br>", " ")).into_iter().collect()
}

/// A label without the value a setting shows under it (`Font size<br>100%` → `Font size`).
pub(crate) fn stable_part(label: &str) -> &str {
    label.split("<br>").next().unwrap_or(label).trim()
}

fn is_one_of(label: &str, list: &[&str]) -> bool {
    list.contains(&stable_part(label).to_lowercase().as_str())
}

pub(crate) fn is_commit(label: &str) -> bool {
    is_one_of(label, COMMIT_LABELS)
}

pub(crate) fn is_cancel(label: &str) -> bool {
    is_one_of(label, CANCEL_LABELS)
}

pub(crate) fn is_allow(label: &str) -> bool {
    is_one_of(label, ALLOW_LABELS)
}

/// Whether the label's act has effects of its own that `asked` does not ask for.
pub(crate) fn has_unasked_side_effect(label: &str, asked: &HashSet<String>) -> bool {
    label_words(stable_part(label))
        .iter()
        .any(|w| SIDE_EFFECT_ACTS.contains(&w.as_str()) && !asked.contains(w))
}

pub(crate) fn is_input(w: &Widget) -> bool {
    w.is_text_field()
}

/// Widgets an agent can act on (texts shown as paragraphs are read, not tapped).
pub(crate) fn actionable(w: &Widget) -> bool {
    !w.text.trim().is_empty()
        && !w.widget_type.eq_ignore_ascii_case("p")
        && !w.widget_type.eq_ignore_ascii_case("text")
}

/// A widget that picks one of several options (a checkbox, a radio button, a switch).
pub(crate) fn is_choice(w: &Widget) -> bool {
    let t = w.widget_type.to_ascii_lowercase();
    ["check", "radio", "switch", "toggle"]
        .iter()
        .any(|k| t.contains(k))
}

/// A row of a list (a name with lines under it: "Alice<br>Hello<br>30.06").
pub(crate) fn is_row(label: &str) -> bool {
    label.contains("<br>")
}

/// Whether `page` is small enough to be a dialog rather than a screen.
pub(crate) fn is_small(page: &Page) -> bool {
    page.widgets.iter().filter(|w| actionable(w)).count() <= SMALL_PAGE
}
