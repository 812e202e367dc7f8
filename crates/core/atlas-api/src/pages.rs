//! Pages (seed 000 §1.3, §2.2, §3.1): a screen as an agent sends it, recognising it as a page,
//! adding pages, and a page's actions.

use atlas_model::Widget;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// What a screen shows, as seed 000 §1.3 sends it: key widgets and a description, or the device's
/// own dump.
#[derive(Debug, Clone, Default, Deserialize, Serialize, JsonSchema)]
pub struct UiHierarchy {
    /// The visible key widgets.
    #[serde(default)]
    pub widgets: Vec<Widget>,
    /// A free-text description of the layout, e.g. "包含搜索框和列表".
    #[serde(default)]
    pub page_structure: String,
    /// Beyond the seed: the device's own dump, read into widgets (added to `widgets`): Android
    /// `uiautomator dump` XML or HarmonyOS `uitest dumpLayout` JSON. Checked when read, beyond
    /// this schema (which cannot describe an XML or a JSON document inside a text): a text that is
    /// not such a dump, or a dump with no root node, is refused.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dump: Option<String>,
    /// `uiautomator` or `harmony`; told from the dump's first character when omitted.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(extend("enum" = ["uiautomator", "harmony", null]))]
    pub dump_format: Option<String>,
}

/// Seed 000 §1.3 `match_current_page`: a screen to recognise.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct MatchPageRequest {
    /// The app (its package or bundle name).
    pub app_id: String,
    /// What the screen shows.
    #[serde(default)]
    pub ui_hierarchy: Option<UiHierarchy>,
    /// The screen's title, when the agent knows it.
    #[serde(default)]
    pub page_title: Option<String>,
    /// Reserved by seed 000 for later use; accepted and ignored.
    #[serde(default)]
    pub page_screenshot: Option<String>,
}

/// The page a screen was recognised as.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct MatchedPage {
    /// The page's id.
    pub page_id: String,
    /// The page's name.
    pub page_name: String,
    /// home, list, detail, form, search or other.
    pub page_type: String,
    /// What the page is, in words.
    pub description: String,
    /// How sure the match is, 0..1.
    pub confidence: f64,
}

/// An action available on a page: the widget, where it leads and how well it works.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct PageAction {
    /// click, input, swipe, back…
    pub action_type: String,
    /// The widget's id, when it has one.
    pub widget_id: String,
    /// The widget's text or label.
    pub widget_text: String,
    /// The page it leads to (its id).
    pub target_page_id: String,
    /// The page it leads to (its name).
    pub target_page_name: String,
    /// Its success rate, 0..1.
    pub success_rate: f64,
    /// Its mean latency in milliseconds.
    pub avg_latency_ms: f64,
    /// What the action does, in words.
    pub description: String,
}

/// A page a screen may be, when no page matched surely.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct Candidate {
    /// The page's id.
    pub page_id: String,
    /// The page's name.
    pub page_name: String,
    /// How sure the match is, 0..1.
    pub confidence: f64,
}

/// What `match_current_page` answers: the page, its actions, or candidates when unsure.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct MatchPageResponse {
    /// Whether a page matched surely.
    pub matched: bool,
    /// The page matched, when one was.
    pub page: Option<MatchedPage>,
    /// The matched page's actions, by success rate.
    pub available_actions: Vec<PageAction>,
    /// The pages it may be, most likely first, when none matched surely.
    pub candidates: Vec<Candidate>,
}

/// Seed 000 §2.2 `add_page`: a page of an app, its screen and the intents it completes.
#[derive(Debug, Clone, Default, Serialize, Deserialize, JsonSchema)]
pub struct AddPageRequest {
    /// The app (its package or bundle name).
    pub app_id: String,
    /// The page's name.
    pub page_name: String,
    /// home, list, detail, form, search or other (default).
    #[serde(default)]
    pub page_type: Option<String>,
    /// What the page is, in words.
    #[serde(default)]
    pub description: Option<String>,
    /// Intents this page completes; each is registered with this page as its target.
    #[serde(default)]
    #[schemars(extend("items" = { "type": "string", "minLength": 1, "pattern": atlas_model::NON_BLANK_TEXT }))]
    pub intents: Vec<String>,
    /// What the screen shows.
    #[serde(default)]
    pub ui_hierarchy: Option<UiHierarchy>,
    /// Beyond the seed: the address of a web page (kept as the page's `url`, meta.json's).
    #[serde(default)]
    pub url: Option<String>,
    /// Beyond the seed: the address of every web page of this kind, with the path segments that
    /// name an item written `{id}` (`https://shop.example/orders/{id}`); `query_path` fills it with
    /// the values an intent names ("order 7") to open an item that was never seen.
    #[serde(default)]
    #[schemars(extend("pattern" = "\\{id\\}"))]
    pub url_template: Option<String>,
    /// Beyond the seed: a web page's DOM fingerprint (seed 001 §6; 8 to 64 lowercase hex
    /// digits), as the client that saw the page computed it; meta.json's `dom_fingerprint`.
    #[serde(default)]
    #[schemars(extend("pattern" = "^[0-9a-f]{8,64}$"))]
    pub dom_fingerprint: Option<String>,
    /// Beyond the seed: the version of the app the page was seen in (a device's versionName, a
    /// site's release); the page is marked seen in it and what it shows kept as that version's.
    #[serde(default)]
    pub app_version: Option<String>,
    /// Beyond the seed: the page's title as it shows it (a web page's document title), kept
    /// with what it shows in `app_version`.
    #[serde(default)]
    pub title: Option<String>,
}

/// What `add_page` answers.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct AddPageResponse {
    /// Whether the call succeeded.
    pub success: bool,
    /// The page's id.
    pub page_id: String,
    /// What was done, in words.
    pub message: String,
}

/// Seed 000 §3.1 `get_available_actions`: the actions of a page.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct AvailableActionsRequest {
    /// The page's id.
    pub page_id: String,
}

/// What `get_available_actions` answers: a page's actions by success rate.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct AvailableActionsResponse {
    /// The page's id.
    pub page_id: String,
    /// The page's name.
    pub page_name: String,
    /// The page's actions, by success rate.
    pub actions: Vec<PageAction>,
    /// How many actions the page has.
    pub total_count: usize,
}
