//! Beyond the seed: an app's graph as a viewer draws it—pages with their depth from the home
//! page, transitions with their statistics—whole for an app of moderate size, or the
//! neighbourhood of one page for a large one, so that a 10,000-page app stays drawable.

use std::collections::{HashMap, HashSet, VecDeque};

use atlas_model::{AtlasError, PageType, Result, validate_text};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::Atlas;
use crate::navigate::round3;

/// Most pages one answer holds.
pub const MAX_VIEW_PAGES: usize = 5_000;

#[derive(Debug, Deserialize, JsonSchema)]
pub struct AppGraphRequest {
    pub app_id: String,
    /// Draw only the pages within `radius` steps of this page (either direction).
    #[serde(default)]
    pub center: Option<String>,
    #[serde(default)]
    #[schemars(range(min = 1, max = 20))]
    pub radius: Option<u32>,
    /// Most pages to answer with (default and ceiling 5,000); the nearest to the centre (or the
    /// home page) first.
    #[serde(default)]
    #[schemars(range(min = 1, max = 5000))]
    pub max_pages: Option<usize>,
}

#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct ViewPage {
    pub page_id: String,
    pub page_name: String,
    pub page_type: PageType,
    /// Steps from the home page (none: not reachable from it).
    pub depth: Option<u32>,
    pub visited_count: u64,
    pub intents: usize,
}

#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct ViewTransition {
    pub transition_id: String,
    pub from_page: String,
    pub to_page: String,
    pub action_type: String,
    pub widget_text: String,
    pub success_count: u64,
    pub fail_count: u64,
    pub success_rate: f64,
    pub avg_latency_ms: f64,
}

#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct AppGraphResponse {
    pub app_id: String,
    pub home_page: Option<String>,
    pub total_pages: usize,
    pub total_transitions: usize,
    /// Whether pages were left out (a radius, or more pages than `max_pages`).
    pub truncated: bool,
    pub pages: Vec<ViewPage>,
    /// The transitions between the pages answered.
    pub transitions: Vec<ViewTransition>,
}

/// Breadth-first distances from `start` along `next`, at most `limit` steps.
fn distances<'a>(
    start: &'a str,
    next: &HashMap<&'a str, Vec<&'a str>>,
    limit: u32,
) -> HashMap<&'a str, u32> {
    let mut seen = HashMap::from([(start, 0)]);
    let mut queue = VecDeque::from([start]);
    while let Some(page) = queue.pop_front() {
        let d = seen[page];
        if d >= limit {
            continue;
        }
        for &to in next.get(page).map(Vec::as_slice).unwrap_or_default() {
            if !seen.contains_key(to) {
                seen.insert(to, d + 1);
                queue.push_back(to);
            }
        }
    }
    seen
}

impl Atlas {
    /// An app's graph for drawing (see [`AppGraphRequest`]).
    pub fn get_app_graph(&self, req: AppGraphRequest) -> Result<AppGraphResponse> {
        validate_text("app_id", &req.app_id, true)?;
        if let Some(center) = &req.center {
            validate_text("center", center, false)?;
        }
        // An empty centre is none, as empty optional texts are everywhere.
        let center = req.center.as_deref().filter(|c| !c.is_empty());
        if req.radius.is_some_and(|r| !(1..=20).contains(&r)) {
            return Err(AtlasError::invalid("radius", "radius must be 1 to 20"));
        }
        if req
            .max_pages
            .is_some_and(|m| !(1..=MAX_VIEW_PAGES).contains(&m))
        {
            return Err(AtlasError::invalid(
                "max_pages",
                "max_pages must be 1 to 5000",
            ));
        }
        let max_pages = req.max_pages.unwrap_or(MAX_VIEW_PAGES);
        let state = self.state.read();
        let app = state
            .graph
            .app(&req.app_id)
            .ok_or_else(|| AtlasError::NotFound(format!("app not found: {}", req.app_id)))?;
        let mut forward: HashMap<&str, Vec<&str>> = HashMap::new();
        let mut both: HashMap<&str, Vec<&str>> = HashMap::new();
        for t in app.transitions() {
            forward.entry(&t.from_page).or_default().push(&t.to_page);
            both.entry(&t.from_page).or_default().push(&t.to_page);
            both.entry(&t.to_page).or_default().push(&t.from_page);
        }
        let home = app.home_page().map(|p| p.page_id.as_str());
        let depth = home
            .map(|h| distances(h, &forward, u32::MAX))
            .unwrap_or_default();
        // Which pages, nearest first: around the centre, or from the home page.
        let near: Option<HashMap<&str, u32>> = match (center, req.radius) {
            (Some(center), radius) => {
                if app.page(center).is_none() {
                    return Err(AtlasError::PageNotFound(center.to_string()));
                }
                Some(distances(center, &both, radius.unwrap_or(2)))
            }
            (None, Some(radius)) => home.map(|h| distances(h, &both, radius)),
            (None, None) => None,
        };
        let mut pages: Vec<_> = app
            .pages()
            .iter()
            .filter(|p| {
                near.as_ref()
                    .is_none_or(|n| n.contains_key(p.page_id.as_str()))
            })
            .collect();
        let rank = |id: &str| {
            near.as_ref()
                .and_then(|n| n.get(id))
                .or(depth.get(id))
                .copied()
                .unwrap_or(u32::MAX)
        };
        pages.sort_by_key(|p| (rank(&p.page_id), p.ordinal));
        let truncated = pages.len() > max_pages || pages.len() < app.pages().len();
        pages.truncate(max_pages);
        let kept: HashSet<&str> = pages.iter().map(|p| p.page_id.as_str()).collect();
        let intents_of = |id: &str| {
            app.intents()
                .filter(|i| i.target_page.as_deref() == Some(id))
                .count()
        };
        Ok(AppGraphResponse {
            app_id: app.app_id().to_string(),
            home_page: home.map(str::to_string),
            total_pages: app.pages().len(),
            total_transitions: app.transitions().len(),
            truncated,
            transitions: app
                .transitions()
                .iter()
                .filter(|t| {
                    kept.contains(t.from_page.as_str()) && kept.contains(t.to_page.as_str())
                })
                .map(|t| ViewTransition {
                    transition_id: t.transition_id.clone(),
                    from_page: t.from_page.clone(),
                    to_page: t.to_page.clone(),
                    action_type: t.action.action_type.clone(),
                    widget_text: t.action.widget_text.clone(),
                    success_count: t.success_count,
                    fail_count: t.fail_count,
                    success_rate: round3(t.success_rate()),
                    avg_latency_ms: round3(t.avg_latency_ms()),
                })
                .collect(),
            pages: pages
                .into_iter()
                .map(|p| ViewPage {
                    page_id: p.page_id.clone(),
                    page_name: p.page_name.clone(),
                    page_type: p.page_type,
                    depth: depth.get(p.page_id.as_str()).copied(),
                    visited_count: p.visited_count,
                    intents: p.intents.len() + intents_of(&p.page_id),
                })
                .collect(),
        })
    }
}
