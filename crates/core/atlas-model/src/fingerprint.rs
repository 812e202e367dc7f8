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
        if !is_editable(&kind) && is_stable_label(&w.text) {
            features.insert(format!("t:{}", w.text.trim()));
        }
    }
    features
}

/// The lines of a widget list's stable labels (not what text fields hold): what a person sees,
/// and what two renderings of one screen have in common. Lines, because one renderer joins a
/// row's texts in one element (DroidTask's `Theme<br>Dark`) where another keeps each apart.
pub fn label_lines(widgets: &[Widget]) -> BTreeSet<String> {
    widgets
        .iter()
        .filter(|w| !is_editable(&w.widget_type.to_ascii_lowercase()))
        .flat_map(|w| w.text.split("<br>").flat_map(str::lines))
        .filter(|line| is_stable_label(line))
        .map(|line| line.trim().to_string())
        .collect()
}

/// Whether two screens' [`ui_features`] may come from one rendering. Renderers either number a
/// screen's elements (DroidTask's and AutoDroid's HTML, set-of-marks prompts) or do not: they
/// name them (uiautomator's resource ids, HarmonyOS ids, a web page's) or leave them unnamed (a
/// dialog's plain list rows). A numbering renderer numbers every element, so a screen numbered
/// and one not, sharing no widget identity, are two renderings of a screen, compared on their
/// [`label_lines`] instead. Two screens of one renderer that share no widget are simply unlike.
pub fn one_rendering(a: &BTreeSet<String>, b: &BTreeSet<String>) -> bool {
    /// Whether a screen's widgets are numbered; none for a screen without widgets, which any
    /// renderer may have drawn.
    fn numbered(s: &BTreeSet<String>) -> Option<bool> {
        let ids: Vec<&str> = s
            .iter()
            .filter_map(|f| f.strip_prefix("w:"))
            .filter_map(|kind_id| kind_id.split_once(':').map(|(_, id)| id))
            .collect();
        let mut named = ids.iter().filter(|id| !id.is_empty()).peekable();
        (!ids.is_empty()).then(|| {
            named.peek().is_some() && named.all(|id| id.chars().all(|c| c.is_ascii_digit()))
        })
    }
    match (numbered(a), numbered(b)) {
        (Some(x), Some(y)) => x == y || a.iter().any(|f| f.starts_with("w:") && b.contains(f)),
        _ => true,
    }
}

/// Jaccard similarity of two sets: 0 when both are empty.
pub fn jaccard(a: &BTreeSet<String>, b: &BTreeSet<String>) -> f64 {
    let union = a.union(b).count();
    if union == 0 {
        0.0
    } else {
        a.intersection(b).count() as f64 / union as f64
    }
}

fn is_editable(kind: &str) -> bool {
    kind.contains("input") || kind.contains("edit") || kind.contains("textfield")
}

/// A 16-hex-digit hash of [`ui_features`]: two screens with the same structure and labels share it.
pub fn ui_fingerprint(widgets: &[Widget]) -> String {
    features_fingerprint(&ui_features(widgets))
}

/// [`ui_fingerprint`] of features already taken.
pub fn features_fingerprint(features: &BTreeSet<String>) -> String {
    let mut hasher = Sha256::new();
    for f in features {
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

    #[test]
    fn numbered_and_named_widgets_are_two_renderings_compared_on_their_label_lines() {
        let html = [
            w("0", "Customize colors", "p"),
            w("1", "Theme<br>Dark", "button"),
            w("2", "go back", "button"),
        ];
        let dump = [
            w("com.app:id/title", "Customize colors", "TextView"),
            w("com.app:id/theme", "Theme", "TextView"),
            w("", "Dark", "TextView"),
            w("com.app:id/query", "Dark", "EditText"),
        ];
        let other_dump = [w("com.app:id/list", "Files", "ListView")];
        let (h, d) = (ui_features(&html), ui_features(&dump));
        assert!(!one_rendering(&h, &d));
        // Two screens of one renderer with nothing in common are unlike, not two renderings.
        assert!(one_rendering(&d, &ui_features(&other_dump)));
        assert!(one_rendering(&h, &ui_features(&[w("0", "Files", "p")])));
        // A dialog whose rows no renderer named is not numbered either: another rendering.
        let unnamed = [w("", "Left", "RadioButton"), w("", "Center", "RadioButton")];
        assert!(!one_rendering(&h, &ui_features(&unnamed)));
        assert!(one_rendering(&d, &ui_features(&unnamed)));
        assert!(one_rendering(
            &ui_features(&unnamed),
            &ui_features(&unnamed[..1])
        ));
        assert_eq!(
            label_lines(&html).into_iter().collect::<Vec<_>>(),
            ["Customize colors", "Dark", "Theme", "go back"]
        );
        // What a field holds is no label.
        assert_eq!(
            label_lines(&dump).into_iter().collect::<Vec<_>>(),
            ["Customize colors", "Dark", "Theme"]
        );
    }
}
