//! What is typed into the simulated phone's text fields, and which field has the focus.
//!
//! Key design decision: **text belongs to a field of an activity, not to a recorded screen.** A
//! recording splits one activity into many screens (the keyboard shown, a dialog opened over
//! the form, the form after a value was picked), and a phone keeps a field's text across all of
//! them: it is there again when the dialog closes, and while the activity is on the back stack.
//! So a field is known by its activity and its resource id (its bounds where it has none, or
//! where two fields of a screen share one), its text lives while its activity is on the screen
//! or the back stack, and focus moves with the screens ([`Fields::arrive`]).
//!
//! A screen the recording reached by a typing shows what the recording shows, its field's text
//! included: the recording knows that screen better than the rule above.
//!
//! Editing is a phone's with the cursor at the end: typing appends; Del takes the last
//! character; select-all, then Del or typing, replaces everything. A field's recorded text —
//! a hint such as "Search…", or a name a dialog shows selected — is replaced by the first typing
//! or Del: a dump cannot tell a hint from a value, and both go on a phone in those cases.

use std::collections::{HashMap, HashSet};

use crate::app::{Screen, View};

/// A view's bounds: [[left, top], [right, bottom]].
pub type Bounds = [[i64; 2]; 2];

/// A text field, known across the screens of its activity.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct FieldKey {
    activity: String,
    id: String,
}

impl FieldKey {
    /// The field `view` is on `screen`, if it takes text.
    pub fn of(screen: &Screen, view: &View) -> Option<FieldKey> {
        if !view.editable {
            return None;
        }
        let bounds = view.bounds?;
        let shared = |id: &str| {
            screen
                .views
                .iter()
                .filter(|v| v.editable && v.resource_id.as_deref() == Some(id))
                .count()
                > 1
        };
        let id = match view.resource_id.as_deref() {
            Some(id) if !id.is_empty() && !shared(id) => id.to_string(),
            _ => format!("{bounds:?}"),
        };
        Some(FieldKey {
            activity: screen.foreground_activity.clone(),
            id,
        })
    }
}

/// The fields' texts and the focus.
#[derive(Debug, Default)]
pub struct Fields {
    texts: HashMap<FieldKey, String>,
    focused: Option<FieldKey>,
    /// Select-all was pressed in the focused field and nothing since.
    all_selected: bool,
}

impl Fields {
    /// Nothing typed, nothing focused: the app started afresh.
    pub fn clear(&mut self) {
        *self = Fields::default();
    }

    /// The field with the focus.
    pub fn focused(&self) -> Option<&FieldKey> {
        self.focused.as_ref()
    }

    /// Gives `field` the focus.
    pub fn focus(&mut self, field: FieldKey) {
        if self.focused.as_ref() != Some(&field) {
            self.all_selected = false;
        }
        self.focused = Some(field);
    }

    /// What was typed into `field`, if anything was (an empty text when it was cleared).
    pub fn text(&self, field: &FieldKey) -> Option<&str> {
        self.texts.get(field).map(String::as_str)
    }

    /// Types `text` into the focused field; its whole text after, or none without a focus.
    pub fn type_text(&mut self, text: &str) -> Option<String> {
        let field = self.focused.clone()?;
        let now = self.texts.entry(field).or_default();
        if std::mem::take(&mut self.all_selected) {
            now.clear();
        }
        now.push_str(text);
        Some(now.clone())
    }

    /// Del in the focused field.
    pub fn delete(&mut self) {
        let Some(field) = self.focused.clone() else {
            return;
        };
        let now = self.texts.entry(field).or_default();
        if std::mem::take(&mut self.all_selected) {
            now.clear();
        } else {
            now.pop();
        }
    }

    /// Forward-Del in the focused field, whose cursor is at the end: a selection goes.
    pub fn delete_selection(&mut self) {
        if std::mem::take(&mut self.all_selected)
            && let Some(field) = self.focused.clone()
        {
            self.texts.insert(field, String::new());
        }
    }

    /// Select-all in the focused field.
    pub fn select_all(&mut self) {
        self.all_selected = self.focused.is_some();
    }

    /// Any other key: a selection is let go.
    pub fn other_key(&mut self) {
        self.all_selected = false;
    }

    /// Drops what was typed into the focused field: it shows its recorded text again.
    pub fn forget_focused_text(&mut self) {
        if let Some(field) = &self.focused {
            self.texts.remove(field);
        }
        self.all_selected = false;
    }

    /// Empties the focused field (ADB Keyboard's clear); whether there was one.
    pub fn clear_focused(&mut self) -> bool {
        let Some(field) = self.focused.clone() else {
            return false;
        };
        self.texts.insert(field, String::new());
        self.all_selected = false;
        true
    }

    /// The phone now shows `screen`, with `live` the activities on the screen and the back
    /// stack; `tapped` is where a tap on a text field was, when a tap on one led here. The
    /// texts of activities gone are dropped. The focus goes to the field at the tapped place
    /// (the field tapped, on the screen its tap opened), else to the field the recording shows
    /// focused, else stays on the field it was on if this screen shows it, else nowhere.
    pub fn arrive(&mut self, screen: &Screen, live: &HashSet<&str>, tapped: Option<(i64, i64)>) {
        self.texts
            .retain(|field, _| live.contains(field.activity.as_str()));
        let fields = || {
            screen
                .views
                .iter()
                .filter(|v| v.is_shown())
                .filter_map(|v| Some((v, FieldKey::of(screen, v)?)))
        };
        let at_tap = tapped.and_then(|(x, y)| {
            fields()
                .filter(|(v, _)| v.contains(x, y))
                .min_by_key(|(v, _)| v.area())
                .map(|(_, key)| key)
        });
        let recorded = || fields().find(|(v, _)| v.focused).map(|(_, key)| key);
        let kept = || {
            self.focused
                .clone()
                .filter(|key| fields().any(|(_, k)| &k == key))
        };
        let focus = at_tap.or_else(recorded).or_else(kept);
        if focus != self.focused {
            self.all_selected = false;
        }
        self.focused = focus;
    }

    /// What the field of `view` on `screen` shows when something was typed into it: the text,
    /// or a dot a character in a password field.
    pub fn shown(&self, screen: &Screen, view: &View) -> Option<String> {
        self.shown_as(&FieldKey::of(screen, view)?, view)
    }

    /// [`Fields::shown`] for `view`, the field `key` (known already).
    pub fn shown_as(&self, key: &FieldKey, view: &View) -> Option<String> {
        let text = self.text(key)?;
        Some(if view.is_password {
            "•".repeat(text.chars().count())
        } else {
            text.to_string()
        })
    }

    /// [`Fields::shown`] for every field of `screen` typed into, by bounds.
    pub fn shown_by_bounds(&self, screen: &Screen) -> HashMap<Bounds, String> {
        screen
            .views
            .iter()
            .filter_map(|v| Some((v.bounds?, self.shown(screen, v)?)))
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn field(id: &str, bounds: Bounds, focused: bool) -> View {
        View {
            resource_id: Some(id.into()),
            bounds: Some(bounds),
            editable: true,
            focused,
            ..View::default()
        }
    }

    fn screen(activity: &str, views: Vec<View>) -> Screen {
        Screen {
            state_str: activity.into(),
            name: None,
            foreground_activity: activity.into(),
            width: 1080,
            height: 2400,
            views,
        }
    }

    const TITLE: Bounds = [[0, 100], [1000, 200]];

    #[test]
    fn text_stays_with_its_field_across_a_dialog_and_goes_with_its_activity() {
        let form = screen("app/.Form", vec![field("title", TITLE, false)]);
        let dialog = screen("app/.Form", vec![]);
        let mut fields = Fields::default();
        let live: HashSet<&str> = ["app/.Form"].into();
        fields.arrive(&form, &live, Some((500, 150)));
        assert_eq!(fields.type_text("买菜").as_deref(), Some("买菜"));
        fields.arrive(&dialog, &live, None);
        assert!(fields.focused().is_none());
        fields.arrive(&form, &live, None);
        assert_eq!(fields.shown(&form, &form.views[0]).as_deref(), Some("买菜"));
        fields.arrive(&screen("app/.Main", vec![]), &["app/.Main"].into(), None);
        assert_eq!(fields.shown(&form, &form.views[0]), None);
    }

    #[test]
    fn the_tapped_place_then_the_recorded_focus_then_the_field_kept() {
        let list = screen("app/.Main", vec![]);
        let search = screen(
            "app/.Main",
            vec![
                field("query", [[0, 0], [1000, 100]], true),
                field("other", TITLE, false),
            ],
        );
        let live: HashSet<&str> = ["app/.Main"].into();
        let mut fields = Fields::default();
        fields.arrive(&list, &live, None);
        fields.arrive(&search, &live, None);
        assert_eq!(
            fields.focused(),
            FieldKey::of(&search, &search.views[0]).as_ref()
        );
        fields.arrive(&search, &live, Some((10, 150)));
        assert_eq!(
            fields.focused(),
            FieldKey::of(&search, &search.views[1]).as_ref()
        );
    }

    #[test]
    fn delete_select_all_clear_and_a_password() {
        let mut secret = field("pin", TITLE, true);
        secret.is_password = true;
        let login = screen("app/.Login", vec![secret]);
        let mut fields = Fields::default();
        fields.arrive(&login, &["app/.Login"].into(), None);
        fields.type_text("ab");
        fields.type_text("c");
        fields.delete();
        assert_eq!(fields.shown(&login, &login.views[0]).as_deref(), Some("••"));
        fields.select_all();
        fields.type_text("xyz");
        assert_eq!(fields.text(fields.focused().unwrap()), Some("xyz"));
        fields.select_all();
        fields.delete();
        assert_eq!(fields.text(fields.focused().unwrap()), Some(""));
        fields.type_text("q");
        assert!(fields.clear_focused());
        assert_eq!(fields.text(fields.focused().unwrap()), Some(""));
    }
}
