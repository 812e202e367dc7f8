//! What the viewer draws (`get_app_graph`, `get_page_details`): an app's pages and transitions,
//! and one page with everything known of it.

use atlas_model::{PageType, Widget};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// One report (or, from another replica, the reports on one edge since the last look).
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct RecentReport {
    /// When this server learned of it (RFC 3339).
    pub at: String,
    /// The app.
    pub app_id: String,
    /// The transition's id.
    pub transition_id: String,
    /// The page the step started on (its id).
    pub from_page: String,
    /// The page the step led to (its id).
    pub to_page: String,
    /// click, input, swipe, back…
    pub action_type: String,
    /// The widget's text or label.
    pub widget_text: String,
    /// Reports it stands for (1 for a report made here).
    pub reports: u64,
    /// Reports of the step that worked.
    pub succeeded: u64,
    /// Reports of the step that failed.
    pub failed: u64,
    /// Mean latency reported, when any was.
    pub latency_ms: Option<f64>,
}

/// The viewer's `get_app_graph`: an app's pages and transitions, whole or around a page.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct AppGraphRequest {
    /// The app (its package or bundle name).
    pub app_id: String,
    /// Draw only the pages within `radius` steps of this page (either direction).
    #[serde(default)]
    pub center: Option<String>,
    /// How many steps from `center` to draw (default 2).
    #[serde(default)]
    #[schemars(range(min = 1, max = 20))]
    pub radius: Option<u32>,
    /// Most pages to answer with (default and ceiling 20,000); the nearest to the centre (or the
    /// home page) first.
    #[serde(default)]
    #[schemars(range(min = 1, max = 20000))]
    pub max_pages: Option<usize>,
}

/// A page as the viewer draws it.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct ViewPage {
    /// The page's id.
    pub page_id: String,
    /// The page's name.
    pub page_name: String,
    /// home, list, detail, form, search or other.
    pub page_type: PageType,
    /// Steps from the home page (none: not reachable from it).
    pub depth: Option<u32>,
    /// Screens recognised as this page (`match_current_page`, `add_page`).
    pub visited_count: u64,
    /// Arrivals by its incoming actions: the successful uses of the actions that lead here.
    pub arrivals: u64,
    /// Uses of its actions, successful or not.
    pub departures: u64,
    /// The successful ones among them: with `departures`, the page's success rate, which the
    /// viewer colours it by (every action of the page counted, also those to pages a
    /// neighbourhood leaves out).
    pub successful_departures: u64,
    /// How many intents it serves.
    pub intents: usize,
    /// Where its screenshot is served, when its folder holds one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub screenshot: Option<String>,
    /// The version a release was found without it in: history, on no route.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gone_in: Option<String>,
}

/// A transition as the viewer draws it, with its statistics.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct ViewTransition {
    /// The transition's id.
    pub transition_id: String,
    /// The page it leaves (its id).
    pub from_page: String,
    /// The page it leads to (its id).
    pub to_page: String,
    /// click, input, swipe, back…
    pub action_type: String,
    /// The widget's text or label.
    pub widget_text: String,
    /// How often it worked.
    pub success_count: u64,
    /// How often it failed.
    pub fail_count: u64,
    /// Its success rate, 0..1.
    pub success_rate: f64,
    /// Its mean latency in milliseconds.
    pub avg_latency_ms: f64,
    /// The version a release was found without it in: history, on no route.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gone_in: Option<String>,
}

/// What `get_app_graph` answers: the pages and transitions to draw.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct AppGraphResponse {
    /// The app (its package or bundle name).
    pub app_id: String,
    /// The app's home page, when it has one.
    pub home_page: Option<String>,
    /// Pages the app has.
    pub total_pages: usize,
    /// Transitions the app has.
    pub total_transitions: usize,
    /// Whether pages were left out (a radius, or more pages than `max_pages`).
    pub truncated: bool,
    /// The pages answered.
    pub pages: Vec<ViewPage>,
    /// The transitions between the pages answered.
    pub transitions: Vec<ViewTransition>,
    /// The app's versions, oldest first (the last is current; `get_app_diff` compares two).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub versions: Vec<String>,
}

/// The viewer's `get_page_details`: everything known of one page.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct PageDetailsRequest {
    /// The app (its package or bundle name).
    pub app_id: String,
    /// The page's id.
    pub page_id: String,
}

/// A transition from or to the page, with the name of the page at its other end.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct PageStep {
    /// The transition.
    #[serde(flatten)]
    pub transition: ViewTransition,
    /// The name of the page at the transition's other end.
    pub other_page_name: String,
}

/// An intent a page serves.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct ServedIntent {
    /// The intent's id.
    pub intent_id: String,
    /// The intent in the user's words.
    pub intent_text: String,
    /// Words that tell it apart.
    pub keywords: Vec<String>,
}

/// What `get_page_details` answers: the page, its widgets, intents, actions in and out, and recent
/// reports.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct PageDetailsResponse {
    /// The app (its package or bundle name).
    pub app_id: String,
    /// The page's id.
    pub page_id: String,
    /// The page's name.
    pub page_name: String,
    /// home, list, detail, form, search or other.
    pub page_type: PageType,
    /// What the page is, in words.
    pub description: String,
    /// The web page's address, when it is one.
    pub url: String,
    /// The widgets the page is known to show.
    pub widgets: Vec<Widget>,
    /// Screens recognised as this page (`match_current_page`, `add_page`).
    pub visited_count: u64,
    /// Arrivals by its incoming actions: the successful uses of the actions that lead here.
    pub arrivals: u64,
    /// Uses of its actions, successful or not.
    pub departures: u64,
    /// Steps from the home page (none: not reachable from it).
    pub depth: Option<u32>,
    /// The intents whose target this page is, and those `add_page` gave it.
    pub intents: Vec<ServedIntent>,
    /// The actions available here, the most used first.
    pub actions: Vec<PageStep>,
    /// The actions that lead here, the most used first.
    pub incoming: Vec<PageStep>,
    /// The latest reports of steps from or to this page (newest first, at most 20) that this
    /// server learned of in the last hour.
    pub recent_reports: Vec<RecentReport>,
    /// The page's folder of seed 001 in the data folder (none on PostgreSQL).
    pub folder: Option<String>,
    /// Where its screenshot is served, when its folder holds one (`screenshot.png`, as the web
    /// explorer saves it).
    pub screenshot: Option<String>,
    /// When the page was first added (RFC 3339).
    pub created_at: String,
    /// When the page last changed (RFC 3339).
    pub updated_at: String,
}
