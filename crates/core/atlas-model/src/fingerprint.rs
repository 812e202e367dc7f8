//! A page's structural fingerprint: what stays the same when only its contents change.

use std::collections::BTreeSet;

use sha2::{Digest, Sha256};

use crate::Widget;

/// Whether a widget text is a stable label (a title, a button) rather than content that changes
/// within the page (a typed value, a count, a time, a long message).
pub fn is_stable_label(text: &str) -> bool {
    let t = text.trim();
    !t.is_empty() && t.chars().count() <= 24 && !t.chars().any(|c| c.is_ascii_digit())
}

/// The structural features of a widget list: each widget's type and id, plus the stable labels of
/// widgets that are not text inputs. Sorted and de-duplicated, so order and repetition (list rows)
/// do not matter.
pub fn ui_features(widgets: &[Widget]) -> BTreeSet<String> {
    let mut features = BTreeSet::new();
    for w in widgets {
        let kind = w.widget_type.to_ascii_lowercase();
        features.insert(format!("w:{kind}:{}", w.id));
        let editable =
            kind.contains("input") || kind.contains("edit") || kind.contains("textfield");
        if !editable && is_stable_label(&w.text) {
            features.insert(format!("t:{}", w.text.trim()));
        }
    }
    features
}

/// A 16-hex-digit hash of [`ui_features`]: two screens with the same structure and labels share it.
pub fn ui_fingerprint(widgets: &[Widget]) -> String {
    let mut hasher = Sha256::new();
    for f in ui_features(widgets) {
        hasher.update(f.as_bytes());
        hasher.update([0u8]);
    }
    hasher.finalize()[..8]
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// The name a screen's page gets when nothing known matches it: its title (at most 40
/// characters) and the start of its structural fingerprint, so two screens of one title but
/// different structure get different pages.
pub fn screen_page_name(title: &str, widgets: &[Widget]) -> String {
    format!(
        "{} {}",
        title.chars().take(40).collect::<String>(),
        &ui_fingerprint(widgets)[..6]
    )
    .trim()
    .to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn w(id: &str, text: &str, t: &str) -> Widget {
        Widget {
            id: id.into(),
            text: text.into(),
            widget_type: t.into(),
            ..Default::default()
        }
    }

    #[test]
    fn changing_contents_keep_the_fingerprint() {
        let a = [
            w("title", "购物车", "text"),
            w("count", "3 件", "text"),
            w("q", "麻辣烫", "input"),
        ];
        let b = [
            w("title", "购物车", "text"),
            w("count", "5 件", "text"),
            w("q", "奶茶", "input"),
        ];
        assert_eq!(ui_fingerprint(&a), ui_fingerprint(&b));
        let c = [
            w("title", "我的订单", "text"),
            w("count", "3 件", "text"),
            w("q", "", "input"),
        ];
        assert_ne!(ui_fingerprint(&a), ui_fingerprint(&c));
    }
}
