//! The entities of the GUI graph. Field names follow seed 000 so that they serialise to the
//! shapes agents already speak.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// An app or website whose interface Atlas knows.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct App {
    /// The app's id (an Android package, a HarmonyOS bundle, a site's host).
    pub app_id: String,
    /// The page an agent starts from when it gives no `current_page`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub home_page: Option<String>,
    /// When it was first seen (RFC 3339).
    pub created_at: String,
    /// When it last changed (RFC 3339).
    pub updated_at: String,
    /// The versions of it the graph has seen, in the order it met them: the last is the current
    /// one (see [`crate::versions`]). None for an app whose versions were never told.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub versions: Vec<crate::AppVersion>,
    /// Remembered ways forgotten (`forget_way`), by key ([`crate::way_key`]), with when (ms since
    /// 1970, UTC): the sessions and checks before then no longer count for the way, and runs
    /// after it learn it anew. Kept with the app, so it travels as the app does.
    #[serde(default, skip_serializing_if = "std::collections::BTreeMap::is_empty")]
    pub forgotten_ways: std::collections::BTreeMap<String, i64>,
}

impl App {
    /// The version the graph met last: what planning is for.
    pub fn current_version(&self) -> Option<&str> {
        self.versions.last().map(|v| v.version.as_str())
    }
}

/// Seed 000's page types; anything else reads as `other`: `home` (the app's start), `list` (a
/// list of items), `detail` (one item's page), `form` (a page to fill in), `search`, `other`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
// Each value is told in the enum's doc: a doc comment on a variant would turn the JSON
// Schema's `enum` into a `oneOf` of constants.
#[allow(missing_docs)]
pub enum PageType {
    Home,
    List,
    Detail,
    Form,
    Search,
    #[default]
    Other,
}

impl PageType {
    /// The type a name means (case aside; empty is `other`); `None` for no type of the seed.
    pub fn parse(s: &str) -> Option<PageType> {
        Some(match s.trim().to_ascii_lowercase().as_str() {
            "home" => PageType::Home,
            "list" => PageType::List,
            "detail" => PageType::Detail,
            "form" => PageType::Form,
            "search" => PageType::Search,
            "other" | "" => PageType::Other,
            _ => return None,
        })
    }

    /// Its name in the seed.
    pub fn as_str(self) -> &'static str {
        match self {
            PageType::Home => "home",
            PageType::List => "list",
            PageType::Detail => "detail",
            PageType::Form => "form",
            PageType::Search => "search",
            PageType::Other => "other",
        }
    }
}

/// One widget of a `ui_hierarchy`, as seed 000 gives it.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize, JsonSchema)]
pub struct Widget {
    /// Its resource id, without the package (`title`).
    #[serde(default)]
    pub id: String,
    /// What it shows (its text, else its description).
    #[serde(default)]
    pub text: String,
    /// Its class's simple name (`Button`, `EditText`).
    #[serde(default, rename = "type")]
    pub widget_type: String,
    /// Where it is: `[left,top][right,bottom]` in pixels.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub bounds: String,
    /// Beyond the seed: whether the widget is checked or selected (a checkbox, a radio button, a
    /// tab), where the screen says. On a stored page, as last seen.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub checked: Option<bool>,
    /// On a stored page: how many of the screens recognised as the page showed this widget (see
    /// the page's `visited_count`).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub seen: u32,
}

impl Widget {
    /// The widget's box `[left, top, right, bottom]` in pixels, read from its bounds as
    /// uiautomator (`[l,t][r,b]`) or seed 000 (`l,t,r,b`) write them; none when absent or empty.
    pub fn rect(&self) -> Option<[i64; 4]> {
        let numbers: Vec<i64> = self
            .bounds
            .split(|c: char| !(c.is_ascii_digit() || c == '-'))
            .filter(|s| !s.is_empty())
            .map(|s| s.parse().ok())
            .collect::<Option<_>>()?;
        match numbers[..] {
            [l, t, r, b] if r > l && b > t => Some([l, t, r, b]),
            _ => None,
        }
    }

    /// A field one types into (Android `EditText`, HarmonyOS `TextInput`, HTML `input`): its text
    /// is what it holds, not a name.
    pub fn is_text_field(&self) -> bool {
        let t = self.widget_type.to_ascii_lowercase();
        t.contains("input") || t.contains("edit") || t.contains("textarea")
    }

    /// The one placed widget of a screen that an action naming `id` and `text` means, and its box.
    /// Ids repeat down a list (every row's title has the same id) and texts repeat across a
    /// screen (two "OK"s), so each narrows the other, and what stays ambiguous is none.
    /// Renderings differ in how they show a label, so where no widget shows it whole, a label of
    /// several lines (one renderer joins a row's texts, `Theme<br>Dark`, where another keeps them
    /// apart) names the widget showing its first line, and a long label cut short (at 20
    /// characters or more, with or without an ellipsis) the widget whose text begins with it.
    pub fn named<'a>(
        widgets: &'a [Widget],
        id: &str,
        text: &str,
    ) -> Option<(&'a Widget, [i64; 4])> {
        let text = text.trim();
        let placed: Vec<(&Widget, [i64; 4])> = widgets
            .iter()
            .filter_map(|w| w.rect().map(|r| (w, r)))
            .collect();
        let with_id: Vec<(&Widget, [i64; 4])> = placed
            .iter()
            .copied()
            .filter(|(w, _)| !id.is_empty() && w.id == id)
            .collect();
        let pool = if with_id.is_empty() { placed } else { with_id };
        // The one widget of the pool showing the label, as `shows` reads a widget's text.
        let pick = |shows: &dyn Fn(&str) -> bool| {
            let same_text = |w: &Widget| !text.is_empty() && shows(w.text.trim());
            match pool.as_slice() {
                [one] if text.is_empty() || !id.is_empty() || same_text(one.0) => Some(*one),
                _ => {
                    let mut chosen = pool.iter().filter(|(w, _)| same_text(w));
                    let one = chosen.next()?;
                    chosen.next().is_none().then_some(*one)
                }
            }
        };
        let first_line = text
            .split("<br>")
            .next()
            .and_then(|t| t.lines().next())
            .map(str::trim)
            .filter(|line| !line.is_empty() && *line != text);
        let cut = text.trim_end_matches(['…', '.']).trim_end();
        pick(&|shown| shown == text)
            .or_else(|| {
                let line = first_line?;
                pick(&|shown| shown == line)
            })
            .or_else(|| {
                (cut.chars().count() >= 20).then_some(())?;
                pick(&|shown| shown.len() > cut.len() && shown.starts_with(cut))
            })
    }
}

fn is_zero_u64(n: &u64) -> bool {
    *n == 0
}

fn is_zero(n: &u32) -> bool {
    *n == 0
}

/// A page (screen, state) of an app.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Page {
    /// Its id, derived from the app and the name.
    pub page_id: String,
    /// The app it belongs to.
    pub app_id: String,
    /// Its name, unique within the app.
    pub page_name: String,
    /// Its kind.
    #[serde(default)]
    pub page_type: PageType,
    /// What it is for, in words.
    #[serde(default)]
    pub description: String,
    /// Intents this page completes, as given by `add_page`.
    #[serde(default)]
    pub intents: Vec<String>,
    /// The widgets last seen on this page, kept for structural matching.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub widgets: Vec<Widget>,
    /// A free-text description of its layout.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub page_structure: String,
    /// Order of creation within the app; names the page's folder (`{ordinal:02}_{name}`).
    pub ordinal: u32,
    /// A web page's address.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub url: String,
    /// A web page's address with the parts that name an item written `{id}`
    /// (`http://shop/orders/{id}`): every address of its kind, so that `query_path` can open the
    /// item an intent names ("order 7") though only a few of the items were ever seen.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub url_template: String,
    /// A web page's DOM fingerprint (seed 001 §6), as the client that saw it computed it; a
    /// screen's is derived from its widgets.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub fingerprint: String,
    /// When it was added (RFC 3339).
    pub created_at: String,
    /// When it last changed (RFC 3339).
    pub updated_at: String,
    /// How many screens were taken for it.
    #[serde(default)]
    pub visited_count: u64,
    /// The structural fingerprints of screens in another rendering that were taken for it (the
    /// latest [`MAX_OTHER_RENDERINGS`]): such a screen is this page again the next time, though
    /// the page does not compare on its rendering.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub other_renderings: Vec<String>,
    /// Of [`Page::visited_count`], the screens in another rendering: they say nothing of which
    /// of the page's own widgets it usually shows.
    #[serde(default, skip_serializing_if = "is_zero_u64")]
    pub other_rendering_visits: u64,
    /// The versions of its app it was seen in ([`crate::Versioned`]).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub seen_in: Vec<String>,
    /// The version a release was found without it in: kept as history, left out of routes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gone_in: Option<String>,
    /// What it showed, from the first version that showed each ([`crate::PageFace`]).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub faces: Vec<crate::PageFace>,
}

impl Page {
    /// What [`Page::url_template`] writes in place of the item.
    pub const URL_ITEM: &str = "{id}";

    /// A page of `app_id` named `page_name` with its derived id and nothing else yet (no
    /// description, widgets or times), to fill in as the caller needs.
    pub fn named(app_id: &str, page_name: &str) -> Page {
        Page {
            page_id: crate::page_id(app_id, page_name),
            app_id: app_id.into(),
            page_name: page_name.into(),
            ..Default::default()
        }
    }
}

/// The most screens in other renderings a page remembers.
pub const MAX_OTHER_RENDERINGS: usize = 32;

/// What an agent did on a page.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Default, Serialize, Deserialize, JsonSchema)]
pub struct Action {
    /// click, input, swipe, back, long_click, ...
    pub action_type: String,
    /// The widget's id, when known.
    #[serde(default)]
    pub widget_id: String,
    /// The widget's text, when it has one.
    #[serde(default)]
    pub widget_text: String,
    /// The widget's XPath, when the agent gave one.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub widget_xpath: String,
    /// The text typed (input actions).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub input_text: String,
}

impl Action {
    /// What identifies the widget: its id when the agent knows one, otherwise its text. A report
    /// that names only the text (as seed 000's example does) still finds its edge.
    pub fn widget_key(&self) -> &str {
        if self.widget_id.is_empty() {
            &self.widget_text
        } else {
            &self.widget_id
        }
    }

    /// Whether two actions name the same widget: the same id when both know one, else the same
    /// text. One agent may report a widget's id and text (read off the dump) where another, or
    /// a hand-made graph, names it by its text alone: that is one widget, not two.
    pub fn same_widget(&self, other: &Action) -> bool {
        let (id, other_id) = (self.widget_id.trim(), other.widget_id.trim());
        let (text, other_text) = (self.widget_text.trim(), other.widget_text.trim());
        match (id.is_empty(), other_id.is_empty()) {
            (false, false) => id.eq_ignore_ascii_case(other_id),
            (true, true) => text.eq_ignore_ascii_case(other_text),
            _ => !text.is_empty() && text.eq_ignore_ascii_case(other_text),
        }
    }

    /// A short human-readable label: `点击'外卖'`, `输入'laundry'`, `back`.
    pub fn label(&self) -> String {
        let target = if self.widget_text.is_empty() {
            &self.widget_id
        } else {
            &self.widget_text
        };
        let verb = match self.action_type.as_str() {
            "click" | "tap" => "点击",
            "long_click" | "long_press" => "长按",
            "input" | "type" => "输入",
            "swipe" | "scroll" => "滑动",
            "back" => return "返回".to_string(),
            other => other,
        };
        if self.action_type == "input" && !self.input_text.is_empty() {
            if target.is_empty() {
                format!("{verb}'{}'", self.input_text)
            } else {
                format!("在'{target}'{verb}'{}'", self.input_text)
            }
        } else if target.is_empty() {
            verb.to_string()
        } else {
            format!("{verb}'{target}'")
        }
    }
}

/// An edge of the graph with the statistics that agents report.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Transition {
    /// Its id, derived from the pages and the action.
    pub transition_id: String,
    /// The app it belongs to.
    pub app_id: String,
    /// Where the action starts.
    pub from_page: String,
    /// Where it led.
    pub to_page: String,
    /// The action.
    pub action: Action,
    /// Reports that it worked.
    pub success_count: u64,
    /// Reports that it failed.
    pub fail_count: u64,
    /// Sum of reported latencies and how many there were, so the average stays exact.
    #[serde(default)]
    pub latency_total_ms: f64,
    /// How many latencies were reported.
    #[serde(default)]
    pub latency_samples: u64,
    /// Why it last failed, as reported.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub last_failure_reason: String,
    /// When it was first reported (RFC 3339).
    pub created_at: String,
    /// When it last changed (RFC 3339).
    pub updated_at: String,
    /// The versions of its app it was seen in ([`crate::Versioned`]).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub seen_in: Vec<String>,
    /// The version a release was found without it in: kept as history, left out of routes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gone_in: Option<String>,
}

impl Transition {
    /// Its counters, apart from it.
    pub fn counts(&self) -> crate::Counts {
        crate::Counts::of(self)
    }

    /// Laplace-smoothed success rate (see [`crate::Counts::smoothed_success_rate`]).
    pub fn smoothed_success_rate(&self) -> f64 {
        self.counts().smoothed_success_rate()
    }

    /// The raw rate seed 000 reports; an edge with no reports counts as working.
    pub fn success_rate(&self) -> f64 {
        self.counts().success_rate()
    }

    /// The mean reported latency (0 when none was).
    pub fn avg_latency_ms(&self) -> f64 {
        self.counts().avg_latency_ms()
    }
}

/// An intent registered for an app.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Intent {
    /// Its id, derived from the app and the text.
    pub intent_id: String,
    /// The app it belongs to.
    pub app_id: String,
    /// What a user says, e.g. 点外卖.
    pub intent_text: String,
    /// The page that serves it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub target_page: Option<String>,
    /// Words that also name it.
    #[serde(default)]
    pub keywords: Vec<String>,
    /// When it was registered (RFC 3339).
    pub created_at: String,
    /// The versions of its app it was seen in ([`crate::Versioned`]).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub seen_in: Vec<String>,
    /// The version its page was found gone in.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gone_in: Option<String>,
}

/// One reported step of an agent's session.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TraceStep {
    /// Where the step started.
    pub from_page: String,
    /// Where it led.
    pub to_page: String,
    /// What was done.
    pub action: Action,
    /// Whether it worked.
    pub success: bool,
    /// How long it took, as reported.
    #[serde(default)]
    pub latency_ms: u64,
    /// The state the tapped widget showed before the step, when it has one (a switch, a box, a
    /// choice): what the step found, so a replay can tell a state it would undo.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub checked: Option<bool>,
}

/// What one agent session did for one intent: task memory, reused when the same intent returns.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Trace {
    /// Its id, derived from the app, the session and the intent.
    pub trace_id: String,
    /// The app it belongs to.
    pub app_id: String,
    /// The agent's session.
    pub session_id: String,
    /// The intent the steps were for.
    pub intent: String,
    /// The reported steps, in order.
    pub steps: Vec<TraceStep>,
    /// How the session ended, when its agent said (`end_session`): `true` when the agent
    /// finished the task, `false` when it gave up, ran out of steps or was stopped. `None` for
    /// agents that never say (seed 000's interface has no end of session).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub finished: Option<bool>,
    /// The agent's own words when it finished (its model's `finish(message=…)`), given to the
    /// next agent the session is replayed to.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub finish_message: Option<String>,
    /// The app's version the session ran on, as its device reported it (none when unknown).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub app_version: Option<String>,
    /// The graph's answers the session checked: its record of trust on the app
    /// ([`crate::Tally`]), kept with the session as its steps are.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub checks: Vec<crate::Check>,
    /// What the screen the session finished on showed ([`crate::screen_content`]), when its agent
    /// said: a remembered finish is taken only on a screen that shows the same.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ends_on: Option<String>,
    /// What someone other than its agent judged of it (a test's expectations, an evaluation's
    /// judge, a person), when anyone did (`report_verdict`): it outranks the agent's word.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub verdict: Option<crate::Verdict>,
    /// When its first step was reported (RFC 3339).
    pub created_at: String,
    /// When its last step was (RFC 3339).
    pub updated_at: String,
}

impl Trace {
    /// A trace worth replaying: a verdict passed it, or, where nobody judged it, its agent said
    /// it finished the task (steps that failed on the way are stumbles, not the way); from an
    /// agent that never says, every step succeeded. A failed verdict outranks the agent's word.
    pub fn succeeded(&self) -> bool {
        let any = self.steps.iter().any(|s| s.success);
        if let Some(verdict) = &self.verdict {
            return verdict.passed && any;
        }
        match self.finished {
            Some(finished) => finished && any,
            None => any && self.steps.iter().all(|s| s.success),
        }
    }

    /// A verdict passed it: its success is evidence, not its agent's claim.
    pub fn judged_passed(&self) -> bool {
        self.verdict.as_ref().is_some_and(|v| v.passed)
    }

    /// A verdict failed it, whatever its agent said: it confirms nothing.
    pub fn judged_failed(&self) -> bool {
        self.verdict.as_ref().is_some_and(|v| !v.passed)
    }
}

#[cfg(test)]
mod widget_tests {
    use super::Widget;

    #[test]
    fn bounds_read_as_uiautomator_and_seed_000_write_them() {
        let rect = |b: &str| {
            Widget {
                bounds: b.into(),
                ..Widget::default()
            }
            .rect()
        };
        assert_eq!(rect("[0,80][1080,220]"), Some([0, 80, 1080, 220]));
        assert_eq!(rect("0,300,1080,450"), Some([0, 300, 1080, 450]));
        assert_eq!(rect("[5,5][5,9]"), None);
        assert_eq!(rect(""), None);
    }

    #[test]
    fn a_label_of_several_lines_names_the_widget_showing_its_first_line() {
        let w = |id: &str, text: &str, bounds: &str| Widget {
            id: id.into(),
            text: text.into(),
            bounds: bounds.into(),
            ..Default::default()
        };
        let screen = [
            w("com.app:id/title", "Theme", "[0,100][500,150]"),
            w("com.app:id/value", "Dark", "[0,150][500,200]"),
            w("com.app:id/title", "Text color", "[0,200][500,250]"),
        ];
        let (theme, _) = Widget::named(&screen, "4", "Theme<br>Dark").unwrap();
        assert_eq!(theme.text, "Theme");
        // The whole label first: a widget showing it is the one meant.
        let whole = [
            w("", "Theme", "[0,0][10,10]"),
            w("", "Theme\nDark", "[0,10][10,20]"),
        ];
        assert_eq!(
            Widget::named(&whole, "", "Theme\nDark").unwrap().0.text,
            "Theme\nDark"
        );
        // Nothing showing the first line, or two showing it: none.
        assert!(Widget::named(&screen, "", "Background<br>White").is_none());
        let twice = [
            w("", "Theme", "[0,0][10,10]"),
            w("", "Theme", "[0,10][10,20]"),
        ];
        assert!(Widget::named(&twice, "", "Theme<br>Dark").is_none());
        // A long label cut short names the one widget whose text begins with it; a short one
        // does not stand for a longer text.
        let long = [
            w(
                "",
                "Prevent phone from sleeping while the app is in foreground",
                "[0,0][10,10]",
            ),
            w("", "Theme color", "[0,10][10,20]"),
        ];
        let cut = "Prevent phone from sleeping while the app is in fo";
        assert_eq!(Widget::named(&long, "6", cut).unwrap().0.text, long[0].text);
        assert_eq!(
            Widget::named(&long, "", "Prevent phone from sleeping…")
                .unwrap()
                .0
                .text,
            long[0].text
        );
        assert!(Widget::named(&long, "", "Theme").is_none());
    }
}
