//! Beyond the seed: an app's graph as a viewer draws it—pages with their depth from the home
//! page, transitions with their statistics—whole for an app of moderate size, or the
//! neighbourhood of one page for a large one, so that a 10,000-page app stays drawable.

use std::collections::{HashMap, HashSet, VecDeque};

use atlas_graph::TransitionRef;
use atlas_model::{AtlasError, Result, validate_text};

pub use atlas_api::view::{
    AppGraphRequest, AppGraphResponse, PageDetailsRequest, PageDetailsResponse, PageStep,
    ServedIntent, ViewPage, ViewTransition,
};

use crate::Atlas;
use atlas_navigate::round3;

/// Most pages one answer holds.
pub const MAX_VIEW_PAGES: usize = 20_000;

/// The successful uses of the actions that lead to `page`.
fn arrivals(app: &atlas_graph::AppGraph, page: &str) -> u64 {
    app.incoming(page).map(|t| t.success_count()).sum()
}

/// The uses of `page`'s actions: all of them, and the successful ones.
fn departures(app: &atlas_graph::AppGraph, page: &str) -> (u64, u64) {
    app.outgoing(page).fold((0, 0), |(all, successful), t| {
        (
            all + t.success_count() + t.fail_count(),
            successful + t.success_count(),
        )
    })
}

/// A transition as the viewer draws it.
fn view_transition(t: TransitionRef<'_>) -> ViewTransition {
    ViewTransition {
        transition_id: t.transition_id().to_string(),
        from_page: t.from_page().to_string(),
        to_page: t.to_page().to_string(),
        action_type: t.action().action_type.clone(),
        widget_text: t.action().widget_text.clone(),
        success_count: t.success_count(),
        fail_count: t.fail_count(),
        success_rate: round3(t.counts().success_rate()),
        avg_latency_ms: round3(t.counts().avg_latency_ms()),
        gone_in: t.gone_in().map(str::to_string),
    }
}

/// Most bytes of a screenshot served (seed 001's limit on one).
const MAX_SCREENSHOT_BYTES: u64 = 5 * 1024 * 1024;

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
                "max_pages must be 1 to 20000",
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
            let (from, to) = (t.from_page(), t.to_page());
            forward.entry(from).or_default().push(to);
            both.entry(from).or_default().push(to);
            both.entry(to).or_default().push(from);
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
        let mut targeted: HashMap<&str, usize> = HashMap::new();
        for target in app.intents().filter_map(|i| i.target_page.as_deref()) {
            *targeted.entry(target).or_default() += 1;
        }
        // Where each page's folder is, for the screenshots looked for once the lock is released.
        let folders: Vec<_> = pages.iter().map(|p| self.store.page_folder(p)).collect();
        let mut answer = AppGraphResponse {
            app_id: app.app_id().to_string(),
            home_page: home.map(str::to_string),
            total_pages: app.pages().len(),
            total_transitions: app.transitions().len(),
            truncated,
            versions: app.app.versions.iter().map(|v| v.version.clone()).collect(),
            transitions: app
                .transitions()
                .filter(|t| kept.contains(t.from_page()) && kept.contains(t.to_page()))
                .map(view_transition)
                .collect(),
            pages: pages
                .into_iter()
                .map(|p| {
                    let (departures, successful_departures) = departures(app, &p.page_id);
                    ViewPage {
                        page_id: p.page_id.clone(),
                        page_name: p.page_name.clone(),
                        page_type: p.page_type,
                        depth: depth.get(p.page_id.as_str()).copied(),
                        visited_count: p.visited_count,
                        arrivals: arrivals(app, &p.page_id),
                        departures,
                        successful_departures,
                        intents: p.intents.len()
                            + targeted.get(p.page_id.as_str()).copied().unwrap_or(0),
                        screenshot: None,
                        gone_in: p.gone_in.clone(),
                    }
                })
                .collect(),
        };
        drop(state);
        for (page, folder) in answer.pages.iter_mut().zip(folders) {
            page.screenshot = screenshot_url(folder.as_deref(), &answer.app_id, &page.page_id);
        }
        Ok(answer)
    }

    /// One page as a viewer shows it (see [`PageDetailsResponse`]).
    pub fn get_page_details(&self, req: PageDetailsRequest) -> Result<PageDetailsResponse> {
        validate_text("app_id", &req.app_id, true)?;
        validate_text("page_id", &req.page_id, true)?;
        let state = self.state.read();
        let app = state
            .graph
            .app(&req.app_id)
            .ok_or_else(|| AtlasError::NotFound(format!("app not found: {}", req.app_id)))?;
        let page = app
            .page(&req.page_id)
            .ok_or_else(|| AtlasError::PageNotFound(req.page_id.clone()))?;
        let name_of = |id: &str| {
            app.page(id)
                .map(|p| p.page_name.clone())
                .unwrap_or_default()
        };
        let steps = |mut list: Vec<TransitionRef<'_>>,
                     other: for<'t> fn(&TransitionRef<'t>) -> &'t str| {
            list.sort_by_key(|t| std::cmp::Reverse(t.success_count() + t.fail_count()));
            list.into_iter()
                .map(|t| PageStep {
                    transition: view_transition(t),
                    other_page_name: name_of(other(&t)),
                })
                .collect::<Vec<_>>()
        };
        let mut intents: Vec<ServedIntent> = app
            .intents()
            .filter(|i| i.target_page.as_deref() == Some(page.page_id.as_str()))
            .map(|i| ServedIntent {
                intent_id: i.intent_id.clone(),
                intent_text: i.intent_text.clone(),
                keywords: i.keywords.clone(),
            })
            .collect();
        for text in &page.intents {
            if !intents.iter().any(|i| &i.intent_text == text) {
                intents.push(ServedIntent {
                    intent_id: atlas_model::intent_id(&page.app_id, text),
                    intent_text: text.clone(),
                    keywords: vec![],
                });
            }
        }
        let folder = self.store.page_folder(page);
        let screenshot = match &folder {
            Some(folder) => screenshot_url(Some(folder), &page.app_id, &page.page_id),
            None => self
                .stored_screenshot(page)
                .ok()
                .flatten()
                .map(|_| screenshot_path(&page.app_id, &page.page_id)),
        };
        Ok(PageDetailsResponse {
            app_id: page.app_id.clone(),
            page_id: page.page_id.clone(),
            page_name: page.page_name.clone(),
            page_type: page.page_type,
            description: page.description.clone(),
            url: page.url.clone(),
            widgets: page.widgets.clone(),
            visited_count: page.visited_count,
            arrivals: arrivals(app, &page.page_id),
            departures: departures(app, &page.page_id).0,
            depth: app.home_page().and_then(|h| {
                app.hop_distances(&h.page_id)
                    .get(page.page_id.as_str())
                    .copied()
            }),
            intents,
            actions: steps(app.outgoing(&page.page_id).collect(), |t| t.to_page()),
            incoming: steps(app.incoming(&page.page_id).collect(), |t| t.from_page()),
            recent_reports: self.activity.on_page(app, &page.page_id, 20),
            folder: folder.map(|f| f.display().to_string()),
            screenshot,
            created_at: page.created_at.clone(),
            updated_at: page.updated_at.clone(),
        })
    }

    /// A page's screenshot (PNG) from its folder; none when it has none or the store has no
    /// folders.
    pub fn page_screenshot(&self, app_id: &str, page_id: &str) -> Result<Option<Vec<u8>>> {
        let page = self
            .page(app_id, page_id)
            .ok_or_else(|| AtlasError::PageNotFound(page_id.to_string()))?;
        let Some(folder) = self.store.page_folder(&page) else {
            return self.stored_screenshot(&page);
        };
        let png = read_png(&folder.join(atlas_store::SCREENSHOT))
            .map_err(|e| AtlasError::fault("reading the page's screenshot", e))?;
        within_limit(png)
    }

    /// A page's screenshot from a store without folders (a database's files), when it is a PNG
    /// within the limit.
    fn stored_screenshot(&self, page: &atlas_model::Page) -> Result<Option<Vec<u8>>> {
        let bytes = self
            .store
            .page_files(page)
            .and_then(|files| files.read(atlas_store::SCREENSHOT))
            .map_err(crate::store_error)?;
        within_limit(bytes.filter(|b| b.starts_with(PNG_SIGNATURE)))
    }
}

/// A screenshot as it is served: none, or its bytes within the limit; a larger one is an error.
fn within_limit(png: Option<Vec<u8>>) -> Result<Option<Vec<u8>>> {
    match png {
        Some(bytes) if bytes.len() as u64 > MAX_SCREENSHOT_BYTES => Err(AtlasError::Graph(
            "the page's screenshot is larger than 5 MB".into(),
        )),
        png => Ok(png),
    }
}

/// A screenshot's bytes (up to one byte past the limit): only a regular file, opened without
/// following a symbolic link (one pointing at /etc/passwd or a folder is no screenshot), whose
/// bytes are a PNG's; `None` for anything else. Errors name no path of this machine.
fn read_png(path: &std::path::Path) -> std::io::Result<Option<Vec<u8>>> {
    read_head(path, MAX_SCREENSHOT_BYTES + 1)
}

/// Whether a screenshot is there to serve (its signature read, not the whole file).
fn has_png(path: &std::path::Path) -> bool {
    read_head(path, PNG_SIGNATURE.len() as u64).is_ok_and(|head| head.is_some())
}

/// Up to `limit` bytes of a regular file opened without following a symbolic link, when they
/// start as a PNG's; `None` for a missing file, a link, anything not a regular file or a PNG.
fn read_head(path: &std::path::Path, limit: u64) -> std::io::Result<Option<Vec<u8>>> {
    use std::io::Read;
    use std::os::unix::fs::OpenOptionsExt;
    let file = match std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK)
        .open(path)
    {
        Ok(f) => f,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        // ELOOP: the name is a symbolic link.
        Err(e) if e.raw_os_error() == Some(libc::ELOOP) => return Ok(None),
        Err(e) => return Err(e),
    };
    if !file.metadata()?.is_file() {
        return Ok(None);
    }
    let mut bytes = Vec::new();
    file.take(limit).read_to_end(&mut bytes)?;
    Ok(bytes.starts_with(PNG_SIGNATURE).then_some(bytes))
}

/// The first eight bytes of every PNG file.
const PNG_SIGNATURE: &[u8] = b"\x89PNG\r\n\x1a\n";

/// Where a page's screenshot is served, when its folder holds one.
fn screenshot_url(folder: Option<&std::path::Path>, app_id: &str, page_id: &str) -> Option<String> {
    folder
        .filter(|f| has_png(&f.join(atlas_store::SCREENSHOT)))
        .map(|_| screenshot_path(app_id, page_id))
}

/// The characters a path segment keeps as they are (RFC 3986's unreserved ones).
const SEGMENT: &percent_encoding::AsciiSet = &percent_encoding::NON_ALPHANUMERIC
    .remove(b'-')
    .remove(b'_')
    .remove(b'.')
    .remove(b'~');

/// The route a page's screenshot is served at.
pub fn screenshot_path(app_id: &str, page_id: &str) -> String {
    let escape = |s| percent_encoding::utf8_percent_encode(s, SEGMENT);
    format!(
        "/api/v1/apps/{}/pages/{}/screenshot",
        escape(app_id),
        escape(page_id)
    )
}
